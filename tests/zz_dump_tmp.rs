//! temporary: dumps screens of a capture after each output chunk (deleted before hand-off).
use herd::core::screen::Screen;

#[test]
fn dump() {
    let Ok(name) = std::env::var("DUMP") else {
        return;
    };
    let base = format!("{}/../shared/fixtures/{}", env!("CARGO_MANIFEST_DIR"), name);
    let raw = std::fs::read(format!("{base}.raw")).unwrap();
    let tl = std::fs::read_to_string(format!("{base}.timeline.jsonl")).unwrap();
    let mut s = Screen::new(40, 120);
    let mut pos = 0;
    let mut last = String::new();
    for line in tl.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        if v["dir"] != "out" {
            println!(
                "---- {} {} {:?}",
                v["t"],
                v["dir"],
                v["text"].as_str().unwrap_or("")
            );
            continue;
        }
        let len = v["len"].as_u64().unwrap() as usize;
        let out = s.feed(&raw[pos..pos + len], 8);
        pos += len;
        for r in &out.scrolled_rows[out.context_rows..] {
            println!("SCROLLED| {r}");
        }
        let text = s.text();
        if text != last {
            println!(
                "==== t={} cursor={:?} title={:?}",
                v["t"],
                s.cursor(),
                s.title()
            );
            for (i, r) in s.visible_rows().iter().enumerate() {
                if !r.trim().is_empty() {
                    let r: String = squeeze(r);
                    println!("{i:2}|{r}");
                }
            }
            last = text;
        }
    }
}

fn squeeze(r: &str) -> String {
    let mut out = String::new();
    let chars: Vec<char> = r.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let mut j = i;
        while j < chars.len() && chars[j] == chars[i] {
            j += 1;
        }
        if j - i >= 10 {
            out.push_str(&format!("{}{{x{}}}", chars[i], j - i));
        } else {
            out.extend(&chars[i..j]);
        }
        i = j;
    }
    out
}
