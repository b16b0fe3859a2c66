//! The compiled-component cache under concurrent use: threads that load the
//! same component into an empty cache at once all succeed, and leave one
//! entry and no temporary files behind.

use svc_runtime::{Runtime, RuntimeOptions};

#[test]
fn concurrent_loads_into_an_empty_cache_all_succeed() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let backend = svc_builtin::backend("go").expect("go is built in");
    let runtime = Runtime::new(RuntimeOptions {
        cache_dir: Some(cache.clone()),
        limits: Default::default(),
    });
    std::thread::scope(|s| {
        let loads: Vec<_> = (0..6)
            .map(|_| s.spawn(|| runtime.load_backend(backend.name, backend.wasm).map(drop)))
            .collect();
        for load in loads {
            assert_eq!(load.join().unwrap().map_err(|e| e.to_string()), Ok(()));
        }
    });
    let names: Vec<String> = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
    assert!(names[0].ends_with(".cwasm"), "{names:?}");
}
