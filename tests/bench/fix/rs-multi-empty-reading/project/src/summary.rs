//! Consumption summary of a whole log.
use crate::error::ParseError;
use crate::parse::parse_line;

#[derive(Debug, Default, PartialEq)]
pub struct Summary {
    pub days: usize,
    pub used_kwh: f64,
    pub errors: Vec<ParseError>,
}

pub fn summarise(log: &str) -> Summary {
    let mut s = Summary::default();
    let mut previous: Option<f64> = None;
    for (i, text) in log.lines().enumerate() {
        if text.trim().is_empty() || text.starts_with('#') {
            continue;
        }
        match parse_line(i + 1, text) {
            Ok(r) => {
                if let Some(p) = previous {
                    if r.kwh < p {
                        s.errors.push(ParseError::Decreasing { line: i + 1 });
                        continue;
                    }
                    s.used_kwh += r.kwh - p;
                }
                previous = Some(r.kwh);
                s.days += 1;
            }
            Err(e) => s.errors.push(e),
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = "# date,kWh\n2024-01-01,1000.5\n2024-01-02,1012.0\n2024-01-03,\n2024-01-04,10x5\n2024-01-05,1030.5\n";

    #[test]
    fn consumption_and_errors() {
        let s = summarise(LOG);
        assert_eq!(s.days, 3);
        assert!((s.used_kwh - 30.0).abs() < 1e-9);
        assert_eq!(s.errors, vec![ParseError::InvalidNumber { line: 5, text: "10x5".into() }]);
    }

    #[test]
    fn blank_readings_are_counted_apart() {
        let s = summarise(LOG);
        assert_eq!(s.blank, 1);
    }

    #[test]
    fn blank_reading_error() {
        let e = parse_line(7, "2024-02-01,  ").unwrap_err();
        assert_eq!(e, ParseError::Empty { line: 7 });
        assert_eq!(e.to_string(), "line 7: no reading");
    }

    #[test]
    fn decreasing_reading() {
        let s = summarise("d1,10\nd2,9\nd3,12\n");
        assert_eq!(s.errors, vec![ParseError::Decreasing { line: 2 }]);
        assert_eq!(s.used_kwh, 2.0);
    }
}
