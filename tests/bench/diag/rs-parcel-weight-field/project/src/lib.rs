//! Parcel postage: a base price per zone plus a price per started kilogram.

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Zone {
    Domestic,
    Europe,
    World,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Parcel {
    pub reference: String,
    pub weight_grams: u32,
    pub zone: Zone,
    pub insured: bool,
}

pub const MAX_WEIGHT_GRAMS: u32 = 30_000;

fn rates(zone: Zone) -> (u32, u32) {
    // (base cents, cents per started kilogram)
    match zone {
        Zone::Domestic => (450, 90),
        Zone::Europe => (900, 250),
        Zone::World => (1500, 600),
    }
}

/// Postage in cents; parcels over 30 kg are refused.
pub fn postage_cents(parcel: &Parcel) -> Result<u32, String> {
    if parcel.weight_grams > MAX_WEIGHT_GRAMS {
        return Err(format!("{} weighs over 30 kg", parcel.reference));
    }
    let (base, per_kg) = rates(parcel.zone);
    let kilos = parcel.weight_kg.ceil() as u32;
    let insurance = if parcel.insured { 300 } else { 0 };
    Ok(base + per_kg * kilos + insurance)
}

/// The label's weight line: `2.35 kg`.
pub fn weight_label(parcel: &Parcel) -> String {
    format!("{}.{:02} kg", parcel.weight_grams / 1000, parcel.weight_grams % 1000 / 10)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parcel(weight_grams: u32, zone: Zone, insured: bool) -> Parcel {
        Parcel { reference: "PX-1".into(), weight_grams, zone, insured }
    }

    #[test]
    fn every_started_kilogram_counts() {
        assert_eq!(postage_cents(&parcel(1000, Zone::Domestic, false)), Ok(540));
        assert_eq!(postage_cents(&parcel(1001, Zone::Domestic, false)), Ok(630));
        assert_eq!(postage_cents(&parcel(2350, Zone::Europe, true)), Ok(900 + 750 + 300));
    }

    #[test]
    fn heavy_parcels_are_refused() {
        assert!(postage_cents(&parcel(30_001, Zone::World, false)).is_err());
        assert_eq!(postage_cents(&parcel(30_000, Zone::World, false)), Ok(1500 + 18_000));
    }

    #[test]
    fn label_shows_kilograms() {
        assert_eq!(weight_label(&parcel(2350, Zone::World, false)), "2.35 kg");
    }
}
