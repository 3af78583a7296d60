//! Which panels are shown: one checkbox each (a hidden panel is not drawn at all). A plain
//! function of the lab, drawn with the controls: it changes whenever the lab state does.

use crate::driver::Lab;
use crate::state::Panel;
use yew::prelude::*;

pub fn panel_picker(lab: &Lab) -> Html {
    html! {
        <fieldset class="panels" data-testid="panels">
            <legend>{ "Show" }</legend>
            { for Panel::ALL.iter().map(|&p| {
                let lab = lab.clone();
                let on = lab.state.shows(p);
                html! {
                    <label>
                        <input type="checkbox" checked={on} data-panel={p.label()}
                            onchange={Callback::from(move |_: Event| lab.toggle_panel(p))} />
                        { p.label() }
                    </label>
                }
            }) }
        </fieldset>
    }
}
