// A Rust hello world that allocates (issue 26 item 1): Rust's runtime asks
// pthread_getattr_np about the main thread before main, and std::thread
// about each new thread; under the tracer those were the threads' first
// heap events, and the program hung at start-up.
use std::collections::HashMap;
use std::thread;

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
}
