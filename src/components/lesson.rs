//! Lessons in the lab: the lesson a link opens (`lesson=ID`; its task for the student's seed,
//! an answer checked by the model, a hint and a reveal), and the list of every lesson with the
//! student's progress (kept in local storage and carried in the lessons' links as `done=`).

use crate::driver::Lab;
use gloo_timers::callback::Timeout;
use loglab_lessons::{Lesson, Verdict};
use std::collections::BTreeMap;
use yew::prelude::*;

const STORE: &str = "loglab-lessons-passed";

thread_local! {
    /// Redraws the lesson list when progress changes (the list reads local storage).
    static REFRESH: std::cell::RefCell<Option<UseForceUpdateHandle>> = const { std::cell::RefCell::new(None) };
}

fn storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok().flatten()
}

/// Lessons passed on this browser: id -> the lesson version passed.
pub fn passed() -> BTreeMap<String, u32> {
    storage()
        .and_then(|s| s.get_item(STORE).ok().flatten())
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default()
}

fn mark_passed(ids: &[(String, u32)]) {
    let mut p = passed();
    for (id, v) in ids {
        p.insert(id.clone(), *v);
    }
    if let (Some(s), Ok(t)) = (storage(), serde_json::to_string(&p)) {
        let _ = s.set_item(STORE, &t);
    }
    if let Some(r) = REFRESH.with(|r| r.borrow().clone()) {
        r.force_update();
    }
}

/// A lesson's link for this student (seed), with their progress.
fn lesson_href(l: &Lesson, seed: u64, done: &[String]) -> String {
    let q = l.link(seed).unwrap_or_default();
    if done.is_empty() {
        q
    } else {
        format!("{q}&done={}", done.join(","))
    }
}

#[function_component(LessonCard)]
pub fn lesson_card() -> Html {
    let lab = use_context::<Lab>().expect("LessonCard sits inside the lab's context");
    let answer = use_state(String::new);
    let verdict = use_state(|| None::<Result<Verdict, String>>);
    let checking = use_state(|| false);
    // How many answers were checked: the verdict says which one it judges.
    let attempts = use_state(|| 0u32);
    let hint = use_state(|| false);
    let reveal = use_state(|| false);
    let opened = lab.state.opened.clone();
    {
        // Progress a link carries joins this browser's.
        let done = opened.link.done.clone();
        use_effect_with(done, |done| {
            let known: Vec<(String, u32)> =
                done.iter().filter_map(|id| loglab_lessons::find(id).ok().map(|l| (l.id, l.version))).collect();
            mark_passed(&known);
        });
    }
    let Some(id) = opened.link.lesson.clone() else { return html! {} };
    let lesson = match loglab_lessons::find(&id) {
        Ok(l) => l,
        Err(e) => return html! { <p class="error" data-testid="error" role="alert">{ e }</p> },
    };
    let seed = opened.scenario.seed;
    let on_input = {
        let answer = answer.clone();
        Callback::from(move |e: InputEvent| {
            let i: web_sys::HtmlInputElement = e.target_unchecked_into();
            answer.set(i.value());
        })
    };
    let on_check = {
        let (answer, verdict, checking, lesson, attempts) =
            (answer.clone(), verdict.clone(), checking.clone(), lesson.clone(), attempts.clone());
        Callback::from(move |e: SubmitEvent| {
            e.prevent_default();
            checking.set(true);
            verdict.set(None);
            let n = *attempts + 1;
            let (answer, verdict, checking, lesson, attempts) =
                (answer.clone(), verdict.clone(), checking.clone(), lesson.clone(), attempts.clone());
            // Let the page say "checking" before the model runs (a knob lesson runs a whole scenario).
            Timeout::new(30, move || {
                let v = lesson.check(seed, &answer);
                if matches!(&v, Ok(v) if v.correct) {
                    mark_passed(&[(lesson.id.clone(), lesson.version)]);
                }
                verdict.set(Some(v));
                attempts.set(n);
                checking.set(false);
            })
            .forget();
        })
    };
    let toggle = |s: &UseStateHandle<bool>| {
        let s = s.clone();
        Callback::from(move |_: MouseEvent| s.set(!*s))
    };
    html! {
        <section class="panel lesson" data-testid="lesson" data-lesson={lesson.id.clone()} data-step="1"
            data-seed={seed.to_string()} data-version={lesson.version.to_string()}>
            <h2>{ &lesson.title }<span class="muted">{ format!(" — lesson from source thread {}", lesson.thread) }</span></h2>
            <p>{ &lesson.text }</p>
            <p class="task" data-testid="lesson-task"><strong>{ "Your task: " }</strong>{ lesson.task_text(seed) }</p>
            <form class="answer" onsubmit={on_check}>
                <input data-testid="lesson-answer" aria-label="your answer" placeholder="your answer"
                    value={(*answer).clone()} oninput={on_input} />
                <button data-testid="lesson-check" type="submit" disabled={*checking}>{ "Check" }</button>
                if *checking { <span class="muted" data-testid="lesson-checking">{ " checking with the model…" }</span> }
            </form>
            { match &*verdict {
                Some(Ok(v)) => html! { <p data-testid="lesson-verdict" data-correct={v.correct.to_string()} data-attempt={attempts.to_string()}
                    class={if v.correct { "verdict right" } else { "verdict wrong" }}>{ &v.message }</p> },
                Some(Err(e)) => html! { <p data-testid="lesson-verdict" data-correct="false" data-attempt={attempts.to_string()} class="verdict wrong">{ e }</p> },
                None => html! {},
            } }
            <p class="lesson-help">
                <button class="small secondary" data-testid="lesson-hint" onclick={toggle(&hint)}>{ "Hint" }</button>
                <button class="small secondary" data-testid="lesson-reveal" onclick={toggle(&reveal)}>{ "Reveal the answer" }</button>
            </p>
            if *hint { <p class="hint" data-testid="lesson-hint-text">{ &lesson.hint }</p> }
            if *reveal {
                <div class="reveal" data-testid="lesson-reveal-text">
                    <p>{ &lesson.reveal }</p>
                    <p class="muted">{ format!("Kernel function: {}. For your variant the model's answer is: ", lesson.kernel_function) }
                        <strong data-testid="lesson-expected">{ revealed_answer(&lesson, seed) }</strong></p>
                </div>
            }
        </section>
    }
}

/// The answer the reveal shows: a setting the model accepts is found by running the candidates
/// (a second or two); a crash point is left to the student's exploration (finding one runs
/// the crash explorer over the run, too long for a click).
fn revealed_answer(l: &Lesson, seed: u64) -> String {
    let got = match l.check {
        loglab_lessons::Check::Crash { .. } => l.expected(seed),
        _ => l.solve(seed),
    };
    got.unwrap_or_else(|e| e)
}

/// Every lesson, with this browser's progress; each links to the lesson for the student's seed.
#[function_component(LessonList)]
pub fn lesson_list() -> Html {
    let lab = use_context::<Lab>().expect("LessonList sits inside the lab's context");
    let refresh = use_force_update();
    REFRESH.with(|r| *r.borrow_mut() = Some(refresh));
    let seed = lab.state.opened.scenario.seed;
    let lessons = loglab_lessons::lessons();
    let passed = passed();
    let done: Vec<String> =
        lessons.iter().filter(|l| passed.get(&l.id) == Some(&l.version)).map(|l| l.id.clone()).collect();
    html! {
        <details class="lessons" data-testid="lesson-list" >
            <summary>{ format!("Lessons ({} of {} done)", done.len(), lessons.len()) }</summary>
            <ol>
                { for lessons.iter().map(|l| {
                    let ok = done.contains(&l.id);
                    html! {
                        <li data-lesson={l.id.clone()} data-done={ok.to_string()}>
                            <a href={lesson_href(l, seed, &done)}>{ &l.title }</a>
                            <span class="muted">{ format!(" (source thread {})", l.thread) }</span>
                            if ok { <span class="done" aria-label="passed">{ " ✓" }</span> }
                        </li>
                    }
                }) }
            </ol>
        </details>
    }
}
