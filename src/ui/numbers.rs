//! Numbers as the dashboard writes them: money (compact in rows, precise in details), token
//! counts with thousands separators, cost and turns as one short column.

/// A cost in a few columns: `$0.42`, `$12.34`, `$123`, `<$0.01`.
pub fn cost_short(usd: f64) -> String {
    if usd >= 99.995 {
        format!("${usd:.0}")
    } else if usd >= 0.005 || usd <= 0.0 {
        format!("${:.2}", usd.max(0.0))
    } else {
        "<$0.01".to_string()
    }
}

/// A cost to a hundredth of a cent: `$0.0123`.
pub fn cost_precise(usd: f64) -> String {
    format!("${:.4}", usd.max(0.0))
}

/// `1,234,567`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// A task's turns for a queue row: `3t`.
pub fn turns_short(turns: u64) -> String {
    format!("{turns}t")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn costs_are_compact_in_rows_and_precise_in_details() {
        let table = [
            (0.0, "$0.00"),
            (0.004, "<$0.01"),
            (0.005, "$0.01"),
            (0.4249, "$0.42"),
            (1.0, "$1.00"),
            (12.346, "$12.35"),
            (99.99, "$99.99"),
            (99.996, "$100"),
            (1234.4, "$1234"),
        ];
        for (usd, text) in table {
            assert_eq!(cost_short(usd), text, "{usd}");
        }
        assert_eq!(cost_precise(0.012345), "$0.0123");
        assert_eq!(cost_precise(1.5), "$1.5000");
    }

    #[test]
    fn counts_get_thousands_separators() {
        let table = [
            (0, "0"),
            (999, "999"),
            (1_000, "1,000"),
            (1_200, "1,200"),
            (123_456, "123,456"),
            (1_234_567, "1,234,567"),
        ];
        for (n, text) in table {
            assert_eq!(thousands(n), text);
        }
        assert_eq!(turns_short(3), "3t");
    }
}
