//! The run's trace as `trace-cmd show` prints it (the text `loglab trace` writes): up to the
//! cursor, filtered by event, the last lines on screen and the whole of it to download.

use crate::driver::Lab;
use std::rc::Rc;
use yew::prelude::*;

/// Events a student filters by most (any name works in the field).
const EVENTS: &[&str] = &[
    "xlog_iclog_sync",
    "xlog_iclog_write",
    "xfs_log_cil_wait",
    "xfs_log_force",
    "xfs_log_reserve",
    "xfs_log_grant_sleep",
    "xfs_log_ticket_ungrant",
    "xfs_ail_push",
    "block_rq_issue",
    "block_rq_complete",
];

const SHOWN_LINES: usize = 300;

#[function_component(TracePanel)]
pub fn trace_panel() -> Html {
    let lab = use_context::<Lab>().expect("TracePanel sits inside the lab's context");
    let filter = use_state(String::new);
    let text = use_state(|| None::<Result<Rc<String>, String>>);
    let make = {
        let (lab, filter, text) = (lab.clone(), filter.clone(), text.clone());
        move || {
            let t = lab.trace_to_now(filter.trim()).map(Rc::new);
            text.set(Some(t.clone()));
            t
        }
    };
    let on_show = {
        let make = make.clone();
        Callback::from(move |_: MouseEvent| drop(make()))
    };
    let on_download = {
        let (make, filter) = (make.clone(), filter.clone());
        Callback::from(move |_: MouseEvent| {
            if let Ok(t) = make() {
                let name = if filter.trim().is_empty() {
                    "loglab-trace.txt".to_string()
                } else {
                    format!("loglab-trace-{}.txt", filter.trim())
                };
                crate::download::save(&name, "text/plain", &t);
            }
        })
    };
    let on_filter = {
        let filter = filter.clone();
        Callback::from(move |e: InputEvent| {
            let input: web_sys::HtmlInputElement = e.target_unchecked_into();
            filter.set(input.value());
        })
    };
    let (shown, total) = match &*text {
        Some(Ok(t)) => {
            let body: Vec<&str> = t.lines().filter(|l| !l.starts_with('#')).collect();
            let from = body.len().saturating_sub(SHOWN_LINES);
            (body[from..].join("\n"), body.len())
        }
        _ => (String::new(), 0),
    };
    html! {
        <div class="panel trace" data-testid="trace" style="margin-top:14px">
            <h2>{ "trace" }</h2>
            <p class="what">{ "The run's events as the kernel's tracepoints print them (trace-cmd show): the same text loglab trace writes, up to \
                this moment. It is made by running the scenario again from the start, so what-if branches are not in it." }</p>
            <div class="controls">
                <label>{ "event " }
                    <input list="trace-events" data-testid="trace-filter" placeholder="all events" value={(*filter).clone()} oninput={on_filter} />
                </label>
                <datalist id="trace-events">{ for EVENTS.iter().map(|e| html! { <option value={*e} /> }) }</datalist>
                <button class="small" data-testid="trace-show" onclick={on_show}>{ "Trace up to now" }</button>
                <button class="small secondary" data-testid="trace-download" onclick={on_download}>{ "Download" }</button>
            </div>
            { match &*text {
                Some(Err(e)) => html! { <p class="error">{ e.clone() }</p> },
                Some(Ok(_)) => html! {
                    <>
                        <p class="muted" data-testid="trace-count" data-lines={total.to_string()}>
                            { format!("{total} lines{}", if total > SHOWN_LINES { format!("; the last {SHOWN_LINES} shown") } else { String::new() }) }</p>
                        <pre class="trace-text" data-testid="trace-text">{ shown }</pre>
                    </>
                },
                None => html! { <p class="muted">{ "Pause where you want, then show the trace up to that moment." }</p> },
            } }
        </div>
    }
}
