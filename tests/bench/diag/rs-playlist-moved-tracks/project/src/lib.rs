//! Playlists: tracks with durations, and a summary line for the player.

#[derive(Debug, Clone, PartialEq)]
pub struct Track {
    pub title: String,
    pub artist: String,
    pub seconds: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    pub tracks: usize,
    pub total_seconds: u32,
    pub artists: Vec<String>,
    pub longest: Option<String>,
}

pub fn track(title: &str, artist: &str, seconds: u32) -> Track {
    Track { title: title.into(), artist: artist.into(), seconds }
}

/// `m:ss`, or `h:mm:ss` from one hour on.
pub fn format_duration(seconds: u32) -> String {
    let (h, m, s) = (seconds / 3600, seconds / 60 % 60, seconds % 60);
    if h > 0 {
        format!("{h}:{m:02}:{s:02}")
    } else {
        format!("{m}:{s:02}")
    }
}

/// Totals for a playlist: the artists in first-seen order, the longest track
/// (the first one on a tie).
pub fn summarize(tracks: Vec<Track>) -> Summary {
    let mut total_seconds = 0;
    let mut artists: Vec<String> = Vec::new();
    let mut longest: Option<&Track> = None;
    for t in tracks {
        total_seconds += t.seconds;
        if !artists.contains(&t.artist) {
            artists.push(t.artist.clone());
        }
    }
    for t in &tracks {
        if longest.map_or(true, |l| t.seconds > l.seconds) {
            longest = Some(t);
        }
    }
    Summary {
        tracks: tracks.len(),
        total_seconds,
        artists,
        longest: longest.map(|t| t.title.clone()),
    }
}

pub fn describe(name: &str, summary: &Summary) -> String {
    format!("{name}: {} tracks, {}", summary.tracks, format_duration(summary.total_seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn road_trip() -> Vec<Track> {
        vec![
            track("Highway", "The Drivers", 245),
            track("Dust", "Mara Lin", 312),
            track("Exit 9", "The Drivers", 198),
            track("Long Way", "Oskar", 312),
        ]
    }

    #[test]
    fn summary_counts_and_totals() {
        let s = summarize(road_trip());
        assert_eq!(s.tracks, 4);
        assert_eq!(s.total_seconds, 1067);
        assert_eq!(s.artists, vec!["The Drivers", "Mara Lin", "Oskar"]);
        assert_eq!(s.longest.as_deref(), Some("Dust"));
    }

    #[test]
    fn empty_playlist() {
        let s = summarize(Vec::new());
        assert_eq!((s.tracks, s.total_seconds, s.longest), (0, 0, None));
    }

    #[test]
    fn describe_formats_hours() {
        let mut tracks = road_trip();
        tracks.push(track("Epic", "Oskar", 3000));
        assert_eq!(describe("Trip", &summarize(tracks)), "Trip: 5 tracks, 1:07:47");
    }
}
