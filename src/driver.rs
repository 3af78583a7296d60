//! The one place that owns and ticks the simulation; components get a view and intents.

use gloo_timers::callback::Interval;
use std::cell::RefCell;
use std::rc::Rc;
use xlog::{Metrics, Ns, Scenario, Sim, View, NS_PER_US};
use yew::prelude::*;

/// Frame period of the play loop.
const FRAME_MS: u32 = 33;

/// What components may read and do; they never touch the `Sim` itself.
#[derive(Clone)]
pub struct SimHandle {
    pub view: Rc<View>,
    pub metrics: Rc<Metrics>,
    /// Events processed so far.
    pub events: u64,
    pub playing: bool,
    pub slice_ns: Ns,
    pub error: Option<String>,
    sim: Rc<RefCell<Option<Sim>>>,
    playing_state: UseStateHandle<bool>,
    slice_state: UseStateHandle<Ns>,
    refresh: UseForceUpdateHandle,
}

impl PartialEq for SimHandle {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.view, &other.view) && self.playing == other.playing && self.slice_ns == other.slice_ns
    }
}

impl SimHandle {
    pub fn play(&self) {
        self.playing_state.set(true);
    }
    pub fn pause(&self) {
        self.playing_state.set(false);
    }
    /// Advances virtual time by `n` slices.
    pub fn step(&self, n: u32) {
        advance(&self.sim, self.slice_ns * n as u64);
        self.refresh.force_update();
    }
    pub fn set_slice(&self, ns: Ns) {
        self.slice_state.set(ns);
    }
}

fn advance(sim: &Rc<RefCell<Option<Sim>>>, by: Ns) {
    if let Some(s) = sim.borrow_mut().as_mut() {
        let t = s.now() + by;
        s.run_until(t);
    }
}

/// Builds the simulation of `scenario` and runs it to `at` (the same events as one
/// `run_until(at)`, so its trace hash equals `loglab run --until`).
fn build(scenario: &Scenario, at: Option<Ns>) -> Result<Sim, String> {
    let mut sim = Sim::new(scenario)?;
    if let Some(at) = at {
        sim.set_keep_trace(false);
        sim.run_until(at);
        sim.set_keep_trace(true);
    }
    Ok(sim)
}

#[hook]
pub fn use_sim(scenario: Scenario, at: Option<Ns>) -> SimHandle {
    let built = use_memo((scenario, at), |(s, at)| build(s, *at));
    let sim = use_mut_ref(|| built.as_ref().as_ref().ok().cloned());
    let playing_state = use_state(|| false);
    let slice_state = use_state(|| 10 * NS_PER_US);
    let refresh = use_force_update();
    let timer: Rc<RefCell<Option<Interval>>> = use_mut_ref(|| None);
    {
        let sim = sim.clone();
        let refresh = refresh.clone();
        let slice = *slice_state;
        use_effect_with((*playing_state, slice), move |&(playing, slice)| {
            *timer.borrow_mut() = playing.then(|| {
                Interval::new(FRAME_MS, move || {
                    advance(&sim, slice);
                    refresh.force_update();
                })
            });
            move || drop(timer.borrow_mut().take())
        });
    }
    let guard = sim.borrow();
    let (view, metrics, events, error) = match guard.as_ref() {
        Some(s) => (s.view(), s.metrics(), s.events(), None),
        None => {
            let e = built.as_ref().as_ref().err().cloned();
            let fallback = Sim::new(&Scenario::default()).expect("default scenario is valid");
            (fallback.view(), fallback.metrics(), 0, e)
        }
    };
    drop(guard);
    SimHandle {
        view: Rc::new(view),
        metrics: Rc::new(metrics),
        events,
        playing: *playing_state,
        slice_ns: *slice_state,
        error,
        sim,
        playing_state,
        slice_state,
        refresh,
    }
}
