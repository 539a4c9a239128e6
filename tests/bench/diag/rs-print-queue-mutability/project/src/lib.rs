//! A print spooler: jobs are queued in arrival order, except that jobs of
//! more than `big_pages` pages wait until the small ones are done.

use std::collections::VecDeque;

#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    pub id: u32,
    pub owner: String,
    pub pages: u32,
}

pub fn job(id: u32, owner: &str, pages: u32) -> Job {
    Job { id, owner: owner.to_string(), pages }
}

/// The order the printer takes the jobs in.
pub fn print_order(jobs: &[Job], big_pages: u32) -> Vec<u32> {
    let queue = VecDeque::new();
    for j in jobs {
        if j.pages > big_pages {
            queue.push_back(j);
        } else {
            let at = queue.iter().position(|q: &&Job| q.pages > big_pages).unwrap_or(queue.len());
            queue.insert(at, j);
        }
    }
    queue.into_iter().map(|j| j.id).collect()
}

/// Pages per owner, for the monthly quota report, sorted by owner.
pub fn pages_by_owner(jobs: &[Job]) -> Vec<(String, u32)> {
    let mut out: Vec<(String, u32)> = Vec::new();
    for j in jobs {
        match out.iter_mut().find(|(o, _)| *o == j.owner) {
            Some((_, n)) => *n += j.pages,
            None => out.push((j.owner.clone(), j.pages)),
        }
    }
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_jobs_overtake_big_ones() {
        let jobs = vec![job(1, "ana", 120), job(2, "ben", 2), job(3, "ana", 5), job(4, "cy", 300), job(5, "ben", 1)];
        assert_eq!(print_order(&jobs, 50), vec![2, 3, 5, 1, 4]);
    }

    #[test]
    fn arrival_order_when_all_are_small() {
        let jobs = vec![job(7, "ana", 3), job(8, "ben", 4), job(9, "cy", 1)];
        assert_eq!(print_order(&jobs, 50), vec![7, 8, 9]);
    }

    #[test]
    fn quota_report_sums_pages() {
        let jobs = vec![job(1, "ben", 2), job(2, "ana", 5), job(3, "ben", 10)];
        assert_eq!(pages_by_owner(&jobs), vec![("ana".to_string(), 5), ("ben".to_string(), 12)]);
    }
}
