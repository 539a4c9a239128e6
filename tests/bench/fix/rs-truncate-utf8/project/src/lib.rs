//! Text shaping for push notifications.
pub mod preview;

/// A notification as shown on a lock screen.
pub struct Notification {
    pub title: String,
    pub body: String,
}

impl Notification {
    /// Title and body cut to what fits on one lock-screen row.
    pub fn lock_screen(&self, limit: usize) -> String {
        let title = preview::truncate(&self.title, limit / 3);
        let room = limit.saturating_sub(title.chars().count() + 2);
        format!("{title}: {}", preview::truncate(&preview::collapse_whitespace(&self.body), room))
    }
}
