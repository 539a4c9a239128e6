//! Help-desk tickets: priorities, response deadlines and the escalation queue.

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Priority {
    Low,
    Normal,
    High,
    /// Production is down: answered within the hour, paged at night.
    Urgent,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Ticket {
    pub id: u32,
    pub subject: String,
    pub priority: Priority,
    /// Minutes since the ticket was opened.
    pub age_minutes: u32,
}

impl Priority {
    pub fn parse(label: &str) -> Option<Priority> {
        match label.to_ascii_lowercase().as_str() {
            "low" => Some(Priority::Low),
            "normal" => Some(Priority::Normal),
            "high" => Some(Priority::High),
            "urgent" | "p0" => Some(Priority::Urgent),
            _ => None,
        }
    }

    /// Minutes within which a first response is due.
    pub fn response_minutes(self) -> u32 {
        match self {
            Priority::Low => 3 * 24 * 60,
            Priority::Normal => 24 * 60,
            Priority::High => 4 * 60,
        }
    }
}

pub fn is_overdue(ticket: &Ticket) -> bool {
    ticket.age_minutes > ticket.priority.response_minutes()
}

/// Overdue tickets, most urgent first, then oldest first.
pub fn escalation_queue(tickets: &[Ticket]) -> Vec<u32> {
    let mut due: Vec<&Ticket> = tickets.iter().filter(|t| is_overdue(t)).collect();
    due.sort_by(|a, b| b.priority.cmp(&a.priority).then(b.age_minutes.cmp(&a.age_minutes)));
    due.into_iter().map(|t| t.id).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ticket(id: u32, priority: &str, age_minutes: u32) -> Ticket {
        Ticket { id, subject: format!("ticket {id}"), priority: Priority::parse(priority).unwrap(), age_minutes }
    }

    #[test]
    fn urgent_tickets_are_due_within_the_hour() {
        assert_eq!(Priority::Urgent.response_minutes(), 60);
        assert!(is_overdue(&ticket(1, "p0", 61)));
        assert!(!is_overdue(&ticket(2, "urgent", 59)));
    }

    #[test]
    fn queue_orders_by_priority_then_age() {
        let tickets = vec![
            ticket(10, "low", 5000),
            ticket(11, "high", 300),
            ticket(12, "urgent", 90),
            ticket(13, "high", 900),
            ticket(14, "normal", 100),
        ];
        assert_eq!(escalation_queue(&tickets), vec![12, 13, 11, 10]);
    }
}
