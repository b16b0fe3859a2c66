#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| svc_fuzz::pack_zip(data));
