fn main() {
    // A panic's message goes to the browser's console (the trap that follows carries the stack).
    std::panic::set_hook(Box::new(|info| leptos::logging::error!("{info}")));
    leptos::mount::mount_to_body(pipescope_frontend::App);
}
