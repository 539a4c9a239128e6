//! A weekly rota: one shift per slot, each with an assigned employee.

#[derive(Debug, Clone, PartialEq)]
pub struct Shift {
    pub day: &'static str,
    pub start_hour: u8,
    pub hours: u8,
    pub employee: Option<String>,
}

#[derive(Debug, Default)]
pub struct Rota {
    pub shifts: Vec<Shift>,
}

impl Rota {
    pub fn add(&mut self, day: &'static str, start_hour: u8, hours: u8, employee: Option<&str>) -> usize {
        self.shifts.push(Shift { day, start_hour, hours, employee: employee.map(str::to_string) });
        self.shifts.len() - 1
    }

    pub fn hours_of(&self, employee: &str) -> u32 {
        self.shifts
            .iter()
            .filter(|s| s.employee.as_deref() == Some(employee))
            .map(|s| u32::from(s.hours))
            .sum()
    }

    /// Swaps who works slots `a` and `b`; the shifts keep their times.
    pub fn swap_staff(&mut self, a: usize, b: usize) -> Result<(), String> {
        if a >= self.shifts.len() || b >= self.shifts.len() {
            return Err(format!("no shift {}", a.max(b)));
        }
        if a == b {
            return Ok(());
        }
        let first = &mut self.shifts[a];
        let second = &mut self.shifts[b];
        std::mem::swap(&mut first.employee, &mut second.employee);
        Ok(())
    }

    pub fn unstaffed(&self) -> Vec<&Shift> {
        self.shifts.iter().filter(|s| s.employee.is_none()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swapping_moves_the_people_not_the_times() {
        let mut rota = Rota::default();
        let mon = rota.add("Mon", 8, 8, Some("Ana"));
        let sat = rota.add("Sat", 10, 4, Some("Ben"));
        rota.swap_staff(mon, sat).unwrap();
        assert_eq!(rota.shifts[mon].employee.as_deref(), Some("Ben"));
        assert_eq!(rota.shifts[sat].employee.as_deref(), Some("Ana"));
        assert_eq!((rota.shifts[mon].day, rota.shifts[mon].hours), ("Mon", 8));
        assert_eq!((rota.hours_of("Ana"), rota.hours_of("Ben")), (4, 8));
    }

    #[test]
    fn swapping_with_an_open_shift_unstaffs_the_other() {
        let mut rota = Rota::default();
        let a = rota.add("Tue", 14, 6, Some("Cleo"));
        let b = rota.add("Wed", 6, 6, None);
        rota.swap_staff(b, a).unwrap();
        assert_eq!(rota.unstaffed().len(), 1);
        assert_eq!(rota.unstaffed()[0].day, "Tue");
    }

    #[test]
    fn out_of_range_slots_are_refused() {
        let mut rota = Rota::default();
        rota.add("Thu", 9, 8, Some("Dev"));
        assert!(rota.swap_staff(0, 3).is_err());
        assert!(rota.swap_staff(0, 0).is_ok());
    }
}
