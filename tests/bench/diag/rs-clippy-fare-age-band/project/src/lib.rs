//! Public-transport fares: the price of a ticket depends on the rider's age
//! band and on how many zones the trip crosses.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Band {
    Child,
    Adult,
    Senior,
}

/// Children ride from 6 to 15 years old (younger ones ride free, and get
/// the child band too), adults from 16 to 64, seniors from 65.
pub fn band(age: u32) -> Band {
    if age < 16 {
        Band::Child
    } else if age >= 16 && age < 65 {
        Band::Adult
    } else {
        Band::Senior
    }
}

/// Price in cents: 180 for one zone plus 60 per extra zone, then the
/// band's share (children 50 %, seniors 40 %), rounded to 10 cents.
pub fn fare_cents(age: u32, zones: u32) -> u32 {
    if age < 6 {
        return 0;
    }
    let full = 180 + 60 * zones.saturating_sub(1);
    let percent = match band(age) {
        Band::Child => 50,
        Band::Adult => 100,
        Band::Senior => 40,
    };
    (full * percent + 500) / 1000 * 10
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bands_at_their_edges() {
        assert_eq!(band(15), Band::Child);
        assert_eq!(band(16), Band::Adult);
        assert_eq!(band(64), Band::Adult);
        assert_eq!(band(65), Band::Senior);
    }

    #[test]
    fn fares_per_band_and_zones() {
        assert_eq!(fare_cents(4, 3), 0);
        assert_eq!(fare_cents(30, 1), 180);
        assert_eq!(fare_cents(30, 3), 300);
        assert_eq!(fare_cents(10, 3), 150);
        assert_eq!(fare_cents(70, 2), 100);
    }
}
