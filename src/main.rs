//! Mounts the app; everything else lives in the library so tests can use it.

#[cfg(target_arch = "wasm32")]
fn main() {
    console_error_panic_hook::set_once();
    vramfit_web::remove_loading_message();
    leptos::mount::mount_to_body(vramfit_web::App);
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("vramfit-web runs in a browser: build it with `trunk build` (see README.md)");
    std::process::exit(2);
}
