//! Aggregates over response-time samples (milliseconds).

/// Mean of the samples, or `None` when there are none.
pub fn mean_ms(samples: &[u32]) -> Option<u32> {
    let total: u64 = samples.iter().map(|&s| s as u64).sum();
    Some((total / samples.len() as u64) as u32)
}

/// Share of successful checks as a percentage with one decimal, `None` for no checks.
pub fn availability(ok: usize, total: usize) -> Option<f64> {
    if total == 0 {
        return None;
    }
    Some((ok as f64 * 1000.0 / total as f64).round() / 10.0)
}

/// Largest sample, for the "worst" column.
pub fn worst_ms(samples: &[u32]) -> Option<u32> {
    samples.iter().copied().max()
}
