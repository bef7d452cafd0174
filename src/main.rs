//! Mounts the app; everything else lives in the library so tests can use it.

#[cfg(target_arch = "wasm32")]
fn main() {
    // A panic's message and place in the console (console_error_panic_hook
    // adds a JavaScript stack, which names no Rust function in a release
    // build, for about 1 KB of the first visit).
    std::panic::set_hook(Box::new(|info| {
        web_sys::console::error_1(&info.to_string().into());
    }));
    vramfit_web::remove_loading_message();
    leptos::mount::mount_to_body(vramfit_web::App);
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("vramfit-web runs in a browser: build it with `trunk build` (see README.md)");
    std::process::exit(2);
}
