//! Numbers out of range, through the real binary: `validate` and `run` refuse them with exit 2
//! and `FILE:LINE:COL: message`, and the tasks file is left byte for byte (no panic after
//! writing `running`, as once happened with `timeout_sec` 18446744073709551615).

#![allow(clippy::unwrap_used)]

mod common;
use common::{describe, herd};

fn task_with(field: &str, value: &str) -> String {
    format!(
        "{{\"tasks\": [\n{{\"task_id\": \"t\", \"agent\": \"generic\", \"command\": [\"true\"], \"prompt_template\": \"p\", \"{field}\": {value}}}\n]}}\n"
    )
}

#[test]
fn out_of_range_numbers_are_refused_and_the_file_is_untouched() {
    for (field, value) in [
        ("timeout_sec", "18446744073709551615"),
        ("timeout_sec", "9223372036854775807"),
        ("idle_sec", "1e300"),
        ("permission_wait_sec", "1e300"),
        ("max_retries", "-1"),
        ("attempts", "4294967295"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tasks.json");
        let text = task_with(field, value);
        std::fs::write(&path, &text).unwrap();
        for command in ["validate", "run"] {
            let mut cmd = herd();
            cmd.arg(command).arg("--tasks").arg(&path);
            if command == "run" {
                cmd.arg("--headless");
            }
            let out = cmd.output().unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert_eq!(
                out.status.code(),
                Some(2),
                "{command} {field}={value}\n{}",
                describe(&out)
            );
            let place = format!("{}:2:", path.display());
            assert!(
                stderr.contains(&place) || stdout.contains(&place),
                "{command} {field}={value}: no FILE:LINE:COL\n{}",
                describe(&out)
            );
            assert!(!stderr.contains("panicked"), "{}", describe(&out));
            assert_eq!(
                std::fs::read_to_string(&path).unwrap(),
                text,
                "{command} wrote the file"
            );
        }
        assert!(
            !dir.path().join("runs").exists(),
            "{field}: nothing was started"
        );
    }
}

#[test]
fn an_out_of_range_profile_number_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tasks.json");
    let text = task_with("enabled", "true");
    std::fs::write(&path, &text).unwrap();
    let profiles = dir.path().join("profiles.toml");
    std::fs::write(
        &profiles,
        "[profiles.generic]\ncommand = []\nidle_sec = 1e300\n",
    )
    .unwrap();
    let out = herd()
        .args(["run", "--headless", "--tasks"])
        .arg(&path)
        .arg("--profiles")
        .arg(&profiles)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("idle_sec must be above 0"),
        "{}",
        describe(&out)
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
}
