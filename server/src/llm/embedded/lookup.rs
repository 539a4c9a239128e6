//! Prompt-lookup drafts: an edit reply copies most of the code it was shown,
//! so the tokens that followed the last few generated tokens where they last
//! appeared in the context are a good guess at what comes next. The worker
//! evaluates such a draft in one batch beside the token it just sampled and
//! keeps the longest run the model itself samples there: each kept token is
//! the model's own choice, made in fewer decode calls. (Batched logits can
//! differ from one-token logits in the last bits, so a near-tie may go the
//! other way: docs/decisions.md, "Prompt-lookup drafts".)

/// How drafts are looked up (`backend.lookup_*` in config).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LookupSettings {
    /// Most draft tokens evaluated beside each sampled token (0 = no drafts).
    pub draft_tokens: usize,
    /// Shortest run of trailing tokens that must match earlier in the context.
    pub ngram_min: usize,
    /// Longest run tried first (a longer match is a less ambiguous one).
    pub ngram_max: usize,
}

/// The state of one reply's drafting: where in the context the reply is copying from,
/// and how long a draft is worth trying.
#[derive(Debug)]
pub struct PromptLookup {
    settings: LookupSettings,
    /// The position in the context that should come next if the reply keeps copying from
    /// where the last draft came from.
    follow: Option<usize>,
    /// The next draft's length: each draft token costs a part of a decode step even when it
    /// is rejected, so drafts grow while the model keeps them whole and shrink when it does not.
    length: usize,
    /// The length of the last draft handed out.
    last: usize,
}

impl PromptLookup {
    /// Drafting for one reply; `None` when drafts are switched off.
    pub fn new(settings: LookupSettings) -> Option<Self> {
        (settings.draft_tokens > 0 && settings.ngram_min > 0).then_some(Self {
            settings,
            follow: None,
            length: settings.draft_tokens.div_ceil(2),
            last: 0,
        })
    }

    /// Up to `limit` (and the configured maximum) tokens guessed to follow `seq` (the
    /// context so far, its last token the one just sampled); empty when nothing matches.
    pub fn draft<T: PartialEq + Copy>(&mut self, seq: &[T], limit: usize) -> Vec<T> {
        self.last = 0;
        let limit = limit.min(self.length);
        if limit == 0 || seq.len() < 2 {
            return Vec::new();
        }
        let last = seq[seq.len() - 1];
        // Still copying: the token just sampled is the one the source had next.
        let start = match self.follow {
            Some(s) if s > 0 && s < seq.len() && seq[s - 1] == last => Some(s),
            _ => self.search(seq),
        };
        self.follow = None;
        let Some(start) = start else { return Vec::new() };
        let end = (start + limit).min(seq.len());
        if start >= end {
            return Vec::new();
        }
        self.follow = Some(start);
        self.last = end - start;
        seq[start..end].to_vec()
    }

    /// After a draft from [`draft`](Self::draft): how many of its tokens the model kept. The
    /// token sampled after them continues the copy when it equals the source's next one.
    pub fn kept(&mut self, kept: usize) {
        if let Some(s) = self.follow.as_mut() {
            *s += kept + 1;
        }
        if self.last == 0 {
            return;
        }
        self.length = if kept == self.last {
            (self.length * 2).min(self.settings.draft_tokens)
        } else {
            (kept + 1).min(self.length).max(1)
        };
    }

    /// The position after the most recent earlier occurrence of `seq`'s last n tokens,
    /// trying the longest n first.
    fn search<T: PartialEq>(&self, seq: &[T]) -> Option<usize> {
        let len = seq.len();
        for n in (self.settings.ngram_min..=self.settings.ngram_max).rev() {
            if len <= n {
                continue;
            }
            let tail = &seq[len - n..];
            // Occurrences ending before the tail's own start, most recent first.
            if let Some(i) = (0..len - n).rev().find(|&i| &seq[i..i + n] == tail) {
                return Some(i + n);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lookup(draft_tokens: usize) -> PromptLookup {
        let mut l = PromptLookup::new(LookupSettings { draft_tokens, ngram_min: 2, ngram_max: 3 }).unwrap();
        l.length = draft_tokens;
        l
    }

    #[test]
    fn the_tokens_after_an_earlier_occurrence_are_the_draft() {
        let mut l = lookup(4);
        // context: 1 2 3 4 5 6 7 | reply so far: 9 2 3
        let seq = [1, 2, 3, 4, 5, 6, 7, 9, 2, 3];
        assert_eq!(l.draft(&seq, 10), vec![4, 5, 6, 7]);
    }

    #[test]
    fn the_longest_match_wins_over_a_more_recent_shorter_one() {
        let mut l = lookup(2);
        // "2 3" occurs twice; "1 2 3" only at the start, so the copy continues from there.
        let seq = [1, 2, 3, 4, 8, 2, 3, 5, 1, 2, 3];
        assert_eq!(l.draft(&seq, 10), vec![4, 8]);
        let mut short = lookup(2);
        let seq = [0, 2, 3, 4, 8, 2, 3, 5, 1, 2, 3];
        assert_eq!(short.draft(&seq, 10), vec![5, 1], "the most recent of equally long matches");
    }

    #[test]
    fn nothing_matches_no_draft() {
        let mut l = lookup(4);
        assert!(l.draft(&[1, 2, 3, 4, 5], 10).is_empty());
        assert!(l.draft(&[7], 10).is_empty());
        assert!(lookup(4).draft(&[1, 2, 1, 2], 0).is_empty(), "no room left in the reply");
        assert!(PromptLookup::new(LookupSettings { draft_tokens: 0, ngram_min: 2, ngram_max: 3 }).is_none());
    }

    #[test]
    fn a_copy_under_way_goes_on_from_where_it_was_without_searching() {
        let mut l = lookup(2);
        let mut seq = vec![1, 2, 3, 4, 5, 6, 7, 8, 0, 2, 3];
        assert_eq!(l.draft(&seq, 10), vec![4, 5]);
        // The model kept both and sampled 6 next, as the source has it.
        l.kept(2);
        seq.extend([4, 5, 6]);
        assert_eq!(l.draft(&seq, 10), vec![7, 8]);
        // It kept one (7) and then sampled 9, which the source does not have: search again.
        l.kept(1);
        seq.extend([7, 9]);
        assert!(l.draft(&seq, 10).is_empty());
    }

    #[test]
    fn drafts_grow_while_kept_whole_and_shrink_when_cut() {
        let mut l = PromptLookup::new(LookupSettings { draft_tokens: 8, ngram_min: 1, ngram_max: 1 }).unwrap();
        let seq: Vec<u32> = (0..40).chain([0]).collect();
        assert_eq!(l.draft(&seq, 100).len(), 4, "half the maximum to start");
        l.kept(4);
        let seq: Vec<u32> = seq.into_iter().chain(1..6).collect();
        assert_eq!(l.draft(&seq, 100).len(), 8, "doubled after a whole draft was kept");
        l.kept(2);
        let seq: Vec<u32> = seq.into_iter().chain([6, 7, 99, 8]).collect();
        assert_eq!(l.draft(&seq, 100).len(), 3, "one more than the model kept last time");
    }

    #[test]
    fn a_draft_may_repeat_the_token_just_sampled() {
        let mut l = lookup(8);
        // The tail "5 5" matches at 0..2: the draft is what followed there, the last token itself.
        let seq = [5, 5, 5];
        assert_eq!(l.draft(&seq, 10), vec![5]);
    }
}
