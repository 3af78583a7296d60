//! Copy link: a link to this moment of the lab (scenario, time, panels, speed, compare), with
//! the model version and trace hash that let a later reader know if the model changed under it.

use crate::driver::Lab;
use yew::prelude::*;

#[function_component(CopyLink)]
pub fn copy_link() -> Html {
    let lab = use_context::<Lab>().expect("CopyLink sits inside the lab's context");
    let copied = use_state(|| None::<String>);
    let onclick = {
        let (lab, copied) = (lab.clone(), copied.clone());
        Callback::from(move |_: MouseEvent| {
            let Some(w) = web_sys::window() else { return };
            let loc = w.location();
            // The page's own origin and path: a lab hosted under a sub-path links there.
            let base = format!("{}{}", loc.origin().unwrap_or_default(), loc.pathname().unwrap_or_else(|_| "/".into()));
            let link = format!("{base}{}", lab.moment_query());
            // The clipboard may be refused (no permission, an insecure origin): the link is
            // shown to copy by hand either way.
            let _ = w.navigator().clipboard().write_text(&link);
            copied.set(Some(link));
        })
    };
    html! {
        <div class="copy-link">
            <button class="small secondary" data-testid="copy-link" {onclick}
                title="A link to this moment: the scenario, the time, the panels shown, the speed and any comparison">
                { "Copy link" }</button>
            if let Some(link) = (*copied).clone() {
                <input readonly=true data-testid="copied-link" value={link} aria-label="link to this moment"
                    onfocus={Callback::from(|e: FocusEvent| { let i: web_sys::HtmlInputElement = e.target_unchecked_into(); i.select(); })} />
                <span class="muted">{ " copied" }</span>
            }
        </div>
    }
}
