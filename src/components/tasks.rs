//! The tasks panel: one cell per writer, coloured by what it waits for; selecting one shows
//! why it is blocked, as a chain of kernel objects. With a CPU pool (`cpus`), who runs on each
//! CPU and who waits for one, kernel threads beside the writers.

use crate::drawing::writer_label;
use crate::driver::Lab;
use crate::palette;
use std::rc::Rc;
use xlog::{CpuTask, CpusView, View};
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct TasksProps {
    pub view: Rc<View>,
}

/// What the writers are doing now, most writers first: (state in words, its colour, writers).
/// States that share a colour are told apart by their words.
fn tally(states: &[xlog::WriterState]) -> Vec<(&'static str, &'static str, usize)> {
    let mut v: Vec<(&'static str, &'static str, usize)> = Vec::new();
    for s in states {
        let label = writer_label(s);
        match v.iter_mut().find(|e| e.0 == label) {
            Some(e) => e.2 += 1,
            None => v.push((label, palette::writer(s), 1)),
        }
    }
    v.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(b.0)));
    v
}

/// The waiting line in words: the first few by name, then how many more.
fn runnable_text(c: &CpusView) -> String {
    const SHOWN: usize = 6;
    if c.runnable_total == 0 {
        return "runnable: none waits for a CPU".into();
    }
    let names: Vec<String> = c.runnable.iter().take(SHOWN).map(|t| t.to_string()).collect();
    let more = c.runnable_total.saturating_sub(names.len());
    let tail = if more > 0 { format!(", and {more} more") } else { String::new() };
    let order = if c.queued.is_empty() { "" } else { ", queue by queue" };
    format!("runnable ({} waiting{order}): {}{tail}", c.runnable_total, names.join(", "))
}

/// One CPU of the pool and the task on it; a kernel thread is marked as one. With a run
/// queue a CPU (`cpu_model=kernel`), how many wait on its queue.
fn cpu_chip(i: usize, t: &Option<CpuTask>, queued: Option<usize>) -> Html {
    let (text, class) = match t {
        None => ("idle".to_string(), "cpu idle"),
        Some(t @ CpuTask::Writer(_)) => (t.to_string(), "cpu"),
        Some(t) => (format!("{t} (kernel thread)"), "cpu kernel"),
    };
    let queue = queued.map_or(String::new(), |n| format!(" · {n} queued"));
    html! { <span class={class} data-testid="cpu">{ format!("CPU {i}: {text}{queue}") }</span> }
}

#[function_component(TasksPanel)]
pub fn tasks_panel(p: &TasksProps) -> Html {
    let lab = use_context::<Lab>().expect("TasksPanel sits inside the lab's context");
    let selected = lab.state.selected;
    let why = selected.map(|w| lab.why_blocked(w)).unwrap_or_default();
    html! {
        <div class="panel" data-testid="tasks" style="margin-top:14px">
            <h2>{ "tasks" }</h2>
            <p class="what">{ "Each writer is a task looping reserve → work → commit → (fsync); choose one to see what it is waiting for, and what that waits for." }
                if p.view.cpus.is_some() { { " Below them, the CPU pool (cpus): the task on each CPU, kernel threads marked, and the tasks waiting runnable for one." } }
                if p.view.cpus.as_ref().is_some_and(|c| !c.queued.is_empty()) { { " Each CPU has its own run queue (cpu_model=kernel): a woken push worker waits on its waker's CPU, other tasks on their own last one, and a woken kernel thread goes before the writers queued there." } }
            </p>
            <div class="task-grid">
                { for p.view.writer_states.iter().enumerate().map(|(w, s)| {
                    let lab = lab.clone();
                    let w = w as u32;
                    html! {
                        <button class={classes!("task", (selected == Some(w)).then_some("selected"))}
                            style={format!("--c:{}", palette::writer(s))} data-testid="task"
                            aria-pressed={(selected == Some(w)).to_string()}
                            aria-label={format!("writer {w}: {}", writer_label(s))} title={format!("writer {w}: {}", writer_label(s))}
                            onclick={Callback::from(move |_: MouseEvent| lab.select(w))}>
                        </button>
                    }
                }) }
            </div>
            if let Some(c) = &p.view.cpus {
                <div class="cpus" data-testid="cpus">
                    { for c.running.iter().enumerate().map(|(i, t)| cpu_chip(i, t, c.queued.get(i).copied())) }
                    <span class="runnable" data-testid="runnable">{ runnable_text(c) }</span>
                </div>
            }
            <div class="legend" data-testid="task-legend">
                { for tally(&p.view.writer_states).into_iter().map(|(label, colour, n)| html! {
                    <span style={format!("--c:{colour}")}>{ format!("{n} {label}") }</span>
                }) }
            </div>
            if let Some(w) = selected {
                <div class="why" data-testid="why" aria-live="polite">
                    if why.is_empty() {
                        <p>{ format!("writer {w} is not blocked right now.") }</p>
                    } else {
                        <p>{ format!("writer {w} is blocked:") }</p>
                        <ol>{ for why.iter().map(|l| html! { <li>{ l }</li> }) }</ol>
                    }
                </div>
            }
        </div>
    }
}
