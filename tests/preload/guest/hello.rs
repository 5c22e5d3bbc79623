// A Rust hello world that allocates (issue 26 item 1): Rust's runtime asks
// pthread_getattr_np about the main thread before main, and std::thread
// about each new thread; under the tracer those were the threads' first
// heap events, and the program hung at start-up.
use std::collections::HashMap;
use std::os::raw::{c_char, c_int, c_uint, c_void};
use std::thread;

// With GUEST_OBSERVE set, prints what the program sees of itself, as
// tests/support/guest_observables.h does for the C programs (the parity
// tests compare these lines untraced and traced).
#[repr(C)]
struct Mallinfo2 {
    arena: usize,
    ordblks: usize,
    smblks: usize,
    hblks: usize,
    hblkhd: usize,
    usmblks: usize,
    fsmblks: usize,
    uordblks: usize,
    fordblks: usize,
    keepcost: usize,
}

extern "C" {
    fn mallinfo2() -> Mallinfo2;
    fn dlerror() -> *const c_char;
    fn pthread_key_create(key: *mut c_uint, destructor: Option<unsafe extern "C" fn(*mut c_void)>) -> c_int;
    fn pthread_key_delete(key: c_uint) -> c_int;
}

fn observe() {
    if std::env::var_os("GUEST_OBSERVE").is_none() {
        return;
    }
    let error = unsafe { dlerror() };
    let error = if error.is_null() {
        "none".to_string()
    } else {
        unsafe { std::ffi::CStr::from_ptr(error) }.to_string_lossy().into_owned()
    };
    let info = unsafe { mallinfo2() };
    let fds: Vec<u32> = std::fs::read_dir("/proc/self/fd")
        .map(|d| d.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok()).collect())
        .unwrap_or_default();
    let mut keys = Vec::new();
    let mut key: c_uint = 0;
    while keys.len() < 2048 && unsafe { pthread_key_create(&mut key, None) } == 0 {
        keys.push(key);
    }
    for k in &keys {
        unsafe { pthread_key_delete(*k) };
    }
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let rss = status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse::<i64>().ok())
        .unwrap_or(-1);
    // The directory's own descriptor was among those read (a low number).
    println!("observe fds {}", fds.len() as i64 - 1);
    println!("observe fds_low {}", fds.iter().filter(|&&fd| fd < 900).count() as i64 - 1);
    println!("observe keys {}", keys.len());
    println!("observe dlerror {}", error);
    println!("observe uordblks {}", info.uordblks);
    println!("observe arena {}", info.arena);
    println!("observe rss_kib {}", rss);
}

fn main() {
    let words: Vec<String> = (0..1000).map(|i| format!("word{}", i % 37)).collect();
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for w in &words {
        *counts.entry(w.as_str()).or_insert(0) += 1;
    }
    let worker = thread::spawn(|| {
        let v: Vec<Box<u64>> = (0..500).map(Box::new).collect();
        v.iter().map(|b| **b).sum::<u64>()
    });
    let sum = worker.join().unwrap();
    println!("hello from rust: {} words, {} distinct, thread sum {}", words.len(), counts.len(), sum);
    observe();
}
