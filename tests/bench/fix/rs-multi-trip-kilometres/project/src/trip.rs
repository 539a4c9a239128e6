//! Trips: legs like `walk 850 m` or `train 12.5 mi`, one per line.
use crate::units::Unit;

const METRES_PER_MILE: f64 = 1609.344;

#[derive(Debug, Clone, PartialEq)]
pub struct Leg {
    pub mode: String,
    pub distance: f64,
    pub unit: Unit,
}

impl Leg {
    pub fn metres(&self) -> f64 {
        match self.unit {
            Unit::Metres => self.distance,
            Unit::Miles => self.distance * METRES_PER_MILE,
        }
    }
}

pub fn parse_leg(line: &str) -> Result<Leg, String> {
    let parts: Vec<&str> = line.split_whitespace().collect();
    let [mode, distance, unit] = parts.as_slice() else {
        return Err(format!("expected `mode distance unit`, got `{line}`"));
    };
    let distance: f64 = distance.parse().map_err(|_| format!("bad distance `{distance}`"))?;
    if distance < 0.0 {
        return Err(format!("negative distance in `{line}`"));
    }
    Ok(Leg { mode: mode.to_string(), distance, unit: unit.parse()? })
}

/// Total metres per mode, in order of first appearance.
pub fn totals(log: &str) -> Result<Vec<(String, f64)>, String> {
    let mut out: Vec<(String, f64)> = Vec::new();
    for line in log.lines().filter(|l| !l.trim().is_empty()) {
        let leg = parse_leg(line)?;
        match out.iter_mut().find(|(m, _)| *m == leg.mode) {
            Some((_, total)) => *total += leg.metres(),
            None => out.push((leg.mode.clone(), leg.metres())),
        }
    }
    Ok(out)
}
