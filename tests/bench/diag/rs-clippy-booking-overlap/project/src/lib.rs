//! Meeting-room bookings: half-open time ranges in minutes since midnight.

#[derive(Debug, Clone, PartialEq)]
pub struct Booking {
    pub room: String,
    pub organiser: String,
    pub start: u32,
    pub end: u32,
}

pub fn booking(room: &str, organiser: &str, start: u32, end: u32) -> Booking {
    Booking { room: room.to_string(), organiser: organiser.to_string(), start, end }
}

/// Two bookings clash when they are for the same room and their times
/// overlap; back-to-back meetings do not clash.
pub fn clashes(a: &Booking, b: &Booking) -> bool {
    a.room == a.room && a.start < b.end && b.start < a.end
}

#[derive(Debug, Default)]
pub struct Calendar {
    pub bookings: Vec<Booking>,
}

impl Calendar {
    /// Adds the booking unless it clashes; the error names the organiser in the way.
    pub fn book(&mut self, new: Booking) -> Result<(), String> {
        if new.end <= new.start {
            return Err("a booking must end after it starts".to_string());
        }
        if let Some(other) = self.bookings.iter().find(|b| clashes(b, &new)) {
            return Err(format!("{} is booked by {}", other.room, other.organiser));
        }
        self.bookings.push(new);
        Ok(())
    }

    pub fn free_minutes(&self, room: &str, open: u32, close: u32) -> u32 {
        let busy: u32 = self
            .bookings
            .iter()
            .filter(|b| b.room == room)
            .map(|b| b.end.min(close).saturating_sub(b.start.max(open)))
            .sum();
        (close - open).saturating_sub(busy)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_room_overlap_is_refused() {
        let mut cal = Calendar::default();
        cal.book(booking("Orion", "kim", 540, 600)).unwrap();
        assert_eq!(cal.book(booking("Orion", "lee", 570, 630)), Err("Orion is booked by kim".to_string()));
    }

    #[test]
    fn other_rooms_and_back_to_back_are_fine() {
        let mut cal = Calendar::default();
        cal.book(booking("Orion", "kim", 540, 600)).unwrap();
        cal.book(booking("Vega", "lee", 540, 600)).unwrap();
        cal.book(booking("Orion", "max", 600, 660)).unwrap();
        assert_eq!(cal.bookings.len(), 3);
        assert_eq!(cal.free_minutes("Orion", 480, 1080), 480);
    }
}
