//! The keyboard help (`?`): every shortcut in one dialog; Escape, `?` or the button close it.

use crate::driver::Lab;
use crate::keys::SHORTCUTS;
use yew::prelude::*;

#[function_component(Help)]
pub fn help() -> Html {
    let lab = use_context::<Lab>().expect("Help sits inside the lab's context");
    let close_ref = use_node_ref();
    {
        // Focus moves into the dialog so Enter or Escape closes it straight away.
        let close_ref = close_ref.clone();
        use_effect_with(lab.state.help, move |open| {
            if *open {
                if let Some(b) = close_ref.cast::<web_sys::HtmlElement>() {
                    let _ = b.focus();
                }
            }
        });
    }
    if !lab.state.help {
        return html! {};
    }
    let close = {
        let lab = lab.clone();
        Callback::from(move |_: MouseEvent| lab.close_help())
    };
    html! {
        <div class="help-backdrop" onclick={close.clone()}>
            <div class="help panel" role="dialog" aria-modal="true" aria-labelledby="help-title" data-testid="help"
                onclick={Callback::from(|e: MouseEvent| e.stop_propagation())}>
                <h2 id="help-title">{ "Keyboard" }</h2>
                <p class="what">{ "Every control works from the keyboard: Tab moves between controls, Enter or Space presses one. \
                    These keys work anywhere outside a text field:" }</p>
                <table class="stats">
                    { for SHORTCUTS.iter().map(|(k, what)| html! { <tr><td><kbd>{ *k }</kbd></td><td>{ *what }</td></tr> }) }
                </table>
                <button ref={close_ref} onclick={close} data-testid="help-close">{ "Close" }</button>
            </div>
        </div>
    }
}
