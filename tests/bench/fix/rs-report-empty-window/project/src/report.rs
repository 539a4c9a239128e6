//! Builds the per-service report lines shown on the status page.
use crate::metrics::{availability, mean_ms, worst_ms};

#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    pub ok: bool,
    pub millis: u32,
}

#[derive(Debug, PartialEq)]
pub struct ServiceLine {
    pub name: String,
    pub checks: usize,
    pub availability: Option<f64>,
    pub mean_ms: Option<u32>,
    pub worst_ms: Option<u32>,
}

impl ServiceLine {
    pub fn render(&self) -> String {
        let pct = self.availability.map_or("n/a".to_string(), |a| format!("{a:.1}%"));
        let mean = self.mean_ms.map_or("-".to_string(), |m| format!("{m} ms"));
        format!("{:<10} {:>6} checks  {:>6}  mean {}", self.name, self.checks, pct, mean)
    }
}

#[derive(Default)]
pub struct Report {
    services: Vec<(String, Vec<Check>)>,
}

impl Report {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn add_service(&mut self, name: &str, checks: Vec<Check>) -> &mut Self {
        self.services.push((name.to_string(), checks));
        self
    }

    pub fn lines(&self) -> Vec<ServiceLine> {
        self.services
            .iter()
            .map(|(name, checks)| {
                // Only successful checks have a meaningful response time.
                let times: Vec<u32> = checks.iter().filter(|c| c.ok).map(|c| c.millis).collect();
                ServiceLine {
                    name: name.clone(),
                    checks: checks.len(),
                    availability: availability(times.len(), checks.len()),
                    mean_ms: mean_ms(&times),
                    worst_ms: worst_ms(&times),
                }
            })
            .collect()
    }

    pub fn render(&self) -> String {
        self.lines().iter().map(ServiceLine::render).collect::<Vec<_>>().join("\n")
    }
}
