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

#[hook]
pub fn use_sim(scenario: Scenario) -> SimHandle {
    let built = use_memo(scenario, Sim::new);
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
    let (view, metrics, error) = match guard.as_ref() {
        Some(s) => (s.view(), s.metrics(), None),
        None => {
            let e = built.as_ref().as_ref().err().cloned();
            let fallback = Sim::new(&Scenario::default()).expect("default scenario is valid");
            (fallback.view(), fallback.metrics(), e)
        }
    };
    drop(guard);
    SimHandle {
        view: Rc::new(view),
        metrics: Rc::new(metrics),
        playing: *playing_state,
        slice_ns: *slice_state,
        error,
        sim,
        playing_state,
        slice_state,
        refresh,
    }
}
