//! Teacher mode, with no server: the teacher's page (`?teacher=1`) builds an assignment link
//! (lessons and a seed range) and turns the result codes students paste into a class table;
//! the assignment page (`?assign=…&seeds=…`) gives a student their seed from their name, their
//! lessons, and the result code to hand in.

use crate::components::lesson::passed;
use crate::driver::Lab;
use loglab_lessons::{class_table, Assignment, Cell, ResultCode};
use yew::prelude::*;

const STUDENT: &str = "loglab-student";

fn page_base() -> String {
    web_sys::window()
        .map(|w| {
            let l = w.location();
            format!("{}{}", l.origin().unwrap_or_default(), l.pathname().unwrap_or_else(|_| "/".into()))
        })
        .unwrap_or_default()
}

fn input_value(e: &InputEvent) -> String {
    let i: web_sys::HtmlInputElement = e.target_unchecked_into();
    i.value()
}

#[function_component(TeacherPanel)]
pub fn teacher_panel() -> Html {
    let lab = use_context::<Lab>().expect("TeacherPanel sits inside the lab's context");
    let chosen = use_state(Vec::<String>::new);
    let lo = use_state(|| "1".to_string());
    let hi = use_state(|| "100".to_string());
    let codes = use_state(String::new);
    if !lab.state.opened.link.teacher {
        return html! {};
    }
    let lessons = loglab_lessons::lessons();
    let assignment = Assignment::parse(&chosen.join(","), &format!("{}-{}", *lo, *hi));
    let table = class_table(&codes);
    let toggle = |id: String| {
        let chosen = chosen.clone();
        Callback::from(move |_: Event| {
            let mut c = (*chosen).clone();
            if let Some(i) = c.iter().position(|x| *x == id) {
                c.remove(i);
            } else {
                c.push(id.clone());
            }
            chosen.set(c);
        })
    };
    let set = |h: &UseStateHandle<String>| {
        let h = h.clone();
        Callback::from(move |e: InputEvent| h.set(input_value(&e)))
    };
    let on_codes = {
        let codes = codes.clone();
        Callback::from(move |e: InputEvent| {
            let t: web_sys::HtmlTextAreaElement = e.target_unchecked_into();
            codes.set(t.value());
        })
    };
    html! {
        <section class="panel teacher" data-testid="teacher">
            <h2>{ "Teacher: an assignment and its class table" }</h2>
            <p>{ "Choose lessons and a range of seeds; hand out the link. Each student enters their name, gets their own seed (the same name always the same seed) and, when done, copies a result code. Paste the codes below for the class table. Nothing leaves this browser." }</p>
            <fieldset class="lessons-pick">
                <legend>{ "Lessons" }</legend>
                { for lessons.iter().map(|l| html! {
                    <label><input type="checkbox" data-testid="teacher-lesson" data-lesson={l.id.clone()}
                        checked={chosen.contains(&l.id)} onchange={toggle(l.id.clone())} />{ format!(" {} ", l.title) }</label>
                }) }
            </fieldset>
            <p>{ "Seeds from " }<input data-testid="teacher-seed-lo" size="6" value={(*lo).clone()} oninput={set(&lo)} />
               { " to " }<input data-testid="teacher-seed-hi" size="6" value={(*hi).clone()} oninput={set(&hi)} /></p>
            { match &assignment {
                Ok(a) => html! { <p>{ "Assignment link: " }<input readonly=true class="wide" data-testid="assignment-link"
                    value={format!("{}{}", page_base(), a.query())} /></p> },
                Err(e) => html! { <p class="muted" data-testid="assignment-error">{ e }</p> },
            } }
            <p>{ "Result codes, one per line:" }</p>
            <textarea data-testid="class-codes" rows="5" cols="80" value={(*codes).clone()} oninput={on_codes} />
            if !table.rows.is_empty() {
                <table class="stats class" data-testid="class-table">
                    <tr><th>{ "student" }</th><th>{ "seed" }</th>{ for table.lessons.iter().map(|l| html! { <th>{ l }</th> }) }</tr>
                    { for table.rows.iter().map(|(name, seed, cells)| html! {
                        <tr data-student={name.clone()}>
                            <td>{ name }</td><td>{ seed }</td>
                            { for cells.iter().map(|c| {
                                let (key, text) = match c {
                                    Cell::Passed => ("passed", "✓".to_string()),
                                    Cell::PassedVersion(v) => ("old", format!("✓ (version {v})")),
                                    Cell::NotPassed => ("no", "–".to_string()),
                                    Cell::NotAssigned => ("unassigned", String::new()),
                                };
                                html! { <td data-cell={key}>{ text }</td> }
                            }) }
                        </tr>
                    }) }
                </table>
            }
            { for table.errors.iter().map(|e| html! { <p class="error" data-testid="class-code-error">{ e }</p> }) }
        </section>
    }
}

#[function_component(AssignmentPanel)]
pub fn assignment_panel() -> Html {
    let lab = use_context::<Lab>().expect("AssignmentPanel sits inside the lab's context");
    let name = use_state(|| {
        web_sys::window()
            .and_then(|w| w.local_storage().ok().flatten())
            .and_then(|s| s.get_item(STUDENT).ok().flatten())
            .unwrap_or_default()
    });
    let Some((lessons, seeds)) = lab.state.opened.link.assign.clone() else { return html! {} };
    let assignment = match Assignment::parse(&lessons, &seeds) {
        Ok(a) => a,
        Err(e) => {
            return html! { <p class="error" data-testid="error" role="alert">{ format!("This assignment link is broken ({e}).") }</p> }
        }
    };
    let on_name = {
        let name = name.clone();
        Callback::from(move |e: InputEvent| {
            let v = input_value(&e);
            if let Some(s) = web_sys::window().and_then(|w| w.local_storage().ok().flatten()) {
                let _ = s.set_item(STUDENT, &v);
            }
            name.set(v);
        })
    };
    let student = name.trim().to_string();
    let seed = assignment.seed_for(&student);
    let passed = passed();
    let all = loglab_lessons::lessons();
    let mine: Vec<_> = all.iter().filter(|l| assignment.lessons.contains(&l.id)).collect();
    let code = ResultCode {
        student: student.clone(),
        seed,
        lessons: assignment.lessons.clone(),
        passed: mine.iter().filter_map(|l| passed.get(&l.id).map(|v| (l.id.clone(), *v))).collect(),
    };
    html! {
        <section class="panel assignment" data-testid="assignment">
            <h2>{ "Your assignment" }</h2>
            <p>{ "Your name or student number: " }
                <input data-testid="student-name" value={(*name).clone()} oninput={on_name} /></p>
            if !student.is_empty() {
                <p>{ "Your seed is " }<strong data-testid="student-seed">{ seed }</strong>{ ": your lessons' numbers are your own." }</p>
                <ol>
                    { for mine.iter().map(|l| {
                        let ok = passed.get(&l.id) == Some(&l.version);
                        html! { <li data-lesson={l.id.clone()} data-done={ok.to_string()}>
                            <a href={l.link(seed).unwrap_or_default()}>{ &l.title }</a>
                            if ok { <span class="done">{ " ✓" }</span> }
                        </li> }
                    }) }
                </ol>
                <p>{ "When you are done, come back here and hand in this result code:" }</p>
                <input readonly=true class="wide" data-testid="result-code" value={code.encode()} />
            }
        </section>
    }
}
