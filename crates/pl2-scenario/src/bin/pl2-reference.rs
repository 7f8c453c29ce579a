//! Prints the scenario reference (Markdown) generated from the config definitions.
fn main() {
    print!("{}", pl2_scenario::reference::scenario_reference());
}
