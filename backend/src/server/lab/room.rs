//! Who is in the lab: participants by the key their page keeps (so a reload or a dropped
//! connection rejoins as the same person), each with a nickname the room sees, within a cap;
//! the presenter may lock joining, remove someone (they may rejoin) or ban them (kept out
//! until the join link changes, which starts a new room). Idle participants expire. Time is
//! passed in. Pure: the server holds one `Room` and says what it decides.

use std::collections::{BTreeMap, HashSet};
use std::time::{Duration, Instant};

/// The participants a room holds at most, active; later arrivals may watch.
pub const DEFAULT_CAP: usize = 60;
/// A participant not heard from for this long has left.
pub const IDLE_AFTER: Duration = Duration::from_secs(15 * 60);
/// A nickname's length at most, in characters.
pub const NICKNAME_MAX: usize = 24;

const ADJECTIVES: [&str; 16] = [
    "amber", "brisk", "calm", "dapper", "eager", "fuzzy", "gentle", "hasty", "jolly", "keen",
    "lucky", "mellow", "nimble", "quiet", "rapid", "sunny",
];
const ANIMALS: [&str; 16] = [
    "otter", "badger", "crane", "dingo", "egret", "ferret", "gecko", "heron", "ibis", "jackal",
    "koala", "lemur", "marten", "newt", "ocelot", "puffin",
];

/// One participant, as the room knows them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Participant {
    pub id: u64,
    pub nickname: String,
    last_seen: Instant,
}

/// Why someone may not join, or may not take a nickname, as they are told.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("the presenter has closed the lab to new participants: you can watch")]
    Locked,
    #[error("the lab is full ({0} participants): you can watch, and join when someone leaves")]
    Full(usize),
    #[error("the presenter removed you from this lab")]
    Banned,
    #[error("a nickname needs 1 to {NICKNAME_MAX} letters, digits, spaces or - _ .")]
    BadNickname,
    #[error("someone here is already called {0:?}: pick another")]
    NicknameTaken(String),
}

#[derive(Debug)]
pub struct Room {
    cap: usize,
    locked: bool,
    /// By the key each participant's page keeps.
    participants: BTreeMap<String, Participant>,
    banned: HashSet<String>,
    next_id: u64,
}

impl Default for Room {
    fn default() -> Self {
        Room::new(DEFAULT_CAP)
    }
}

impl Room {
    pub fn new(cap: usize) -> Room {
        Room {
            cap,
            locked: false,
            participants: BTreeMap::new(),
            banned: HashSet::new(),
            next_id: 1,
        }
    }

    /// The page holding `key` joins at `now`, or rejoins as who it was (a locked or full room
    /// still takes back its own).
    pub fn join(&mut self, key: &str, now: Instant) -> Result<&Participant, Refusal> {
        if self.banned.contains(key) {
            return Err(Refusal::Banned);
        }
        if !self.participants.contains_key(key) {
            if self.locked {
                return Err(Refusal::Locked);
            }
            if self.participants.len() >= self.cap {
                return Err(Refusal::Full(self.cap));
            }
            let id = self.next_id;
            self.next_id += 1;
            let nickname = self.generated(id);
            self.participants.insert(
                key.to_string(),
                Participant {
                    id,
                    nickname,
                    last_seen: now,
                },
            );
        }
        let p = self.participants.get_mut(key).expect("inserted above");
        p.last_seen = now;
        Ok(p)
    }

    /// A nickname no one has: two words from the lists, numbered when they are all taken.
    fn generated(&self, id: u64) -> String {
        let n = id - 1;
        let words = ADJECTIVES.len() as u64 * ANIMALS.len() as u64;
        let base = format!(
            "{} {}",
            ADJECTIVES[(n % ADJECTIVES.len() as u64) as usize],
            ANIMALS[((n / ADJECTIVES.len() as u64 + n) % ANIMALS.len() as u64) as usize]
        );
        let mut name = if n < words {
            base.clone()
        } else {
            format!("{base} {}", n / words + 1)
        };
        let mut k = 2;
        while self.taken(&name, None) {
            name = format!("{base} {k}");
            k += 1;
        }
        name
    }

    fn taken(&self, name: &str, except: Option<u64>) -> bool {
        self.participants
            .values()
            .any(|p| Some(p.id) != except && p.nickname.eq_ignore_ascii_case(name))
    }

    /// `key`'s participant takes `wanted` as their nickname (trimmed), if it is fit and free.
    pub fn rename(&mut self, key: &str, wanted: &str) -> Result<&Participant, Refusal> {
        let wanted = wanted.trim();
        let fit = !wanted.is_empty()
            && wanted.chars().count() <= NICKNAME_MAX
            && wanted
                .chars()
                .all(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_' | '.'));
        if !fit {
            return Err(Refusal::BadNickname);
        }
        let id = self.participants.get(key).map(|p| p.id);
        if self.taken(wanted, id) {
            return Err(Refusal::NicknameTaken(wanted.to_string()));
        }
        let p = self.participants.get_mut(key).ok_or(Refusal::BadNickname)?;
        p.nickname = wanted.to_string();
        Ok(p)
    }

    /// Heard from `key` at `now`.
    pub fn seen(&mut self, key: &str, now: Instant) {
        if let Some(p) = self.participants.get_mut(key) {
            p.last_seen = now;
        }
    }

    /// Participants not heard from for `IDLE_AFTER`, removed at `now`.
    pub fn expire(&mut self, now: Instant) -> Vec<Participant> {
        let idle: Vec<String> = self
            .participants
            .iter()
            .filter(|(_, p)| now.duration_since(p.last_seen) >= IDLE_AFTER)
            .map(|(k, _)| k.clone())
            .collect();
        idle.iter()
            .filter_map(|k| self.participants.remove(k))
            .collect()
    }

    /// The presenter removes participant `id`: they may join again.
    pub fn remove(&mut self, id: u64) -> Option<Participant> {
        let key = self.key_of(id)?;
        self.participants.remove(&key)
    }

    /// The presenter bans participant `id`: removed, and kept out of this room.
    pub fn ban(&mut self, id: u64) -> Option<Participant> {
        let key = self.key_of(id)?;
        self.banned.insert(key.clone());
        self.participants.remove(&key)
    }

    /// The id of the participant whose page holds `key`.
    pub fn id_of(&self, key: &str) -> Option<u64> {
        self.participants.get(key).map(|p| p.id)
    }

    fn key_of(&self, id: u64) -> Option<String> {
        self.participants
            .iter()
            .find(|(_, p)| p.id == id)
            .map(|(k, _)| k.clone())
    }

    pub fn lock(&mut self, locked: bool) {
        self.locked = locked;
    }

    pub fn is_locked(&self) -> bool {
        self.locked
    }

    /// The participants, in the order they joined.
    pub fn participants(&self) -> Vec<&Participant> {
        let mut all: Vec<&Participant> = self.participants.values().collect();
        all.sort_by_key(|p| p.id);
        all
    }

    pub fn len(&self) -> usize {
        self.participants.len()
    }

    pub fn is_empty(&self) -> bool {
        self.participants.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_rejoins_as_who_it_was() {
        let t0 = Instant::now();
        let mut room = Room::default();
        let first = room.join("key-a", t0).unwrap().clone();
        let again = room.join("key-a", t0).unwrap().clone();
        assert_eq!(first, again);
        let other = room.join("key-b", t0).unwrap().clone();
        assert_ne!(other.id, first.id);
        assert_ne!(other.nickname, first.nickname);
    }

    #[test]
    fn generated_nicknames_are_unique_for_a_full_room_and_more() {
        let t0 = Instant::now();
        let mut room = Room::new(1_000);
        for k in 0..600 {
            room.join(&format!("key-{k}"), t0).unwrap();
        }
        let names: HashSet<String> = room
            .participants()
            .iter()
            .map(|p| p.nickname.to_lowercase())
            .collect();
        assert_eq!(names.len(), 600);
    }

    #[test]
    fn a_nickname_is_checked_and_unique() {
        let t0 = Instant::now();
        let mut room = Room::default();
        room.join("a", t0).unwrap();
        room.join("b", t0).unwrap();
        assert_eq!(room.rename("a", "  Ada ").unwrap().nickname, "Ada");
        assert_eq!(
            room.rename("b", "ada"),
            Err(Refusal::NicknameTaken("ada".into()))
        );
        for bad in ["", "<script>", &"x".repeat(NICKNAME_MAX + 1), "a\u{0}b"] {
            assert_eq!(room.rename("b", bad), Err(Refusal::BadNickname), "{bad:?}");
        }
        assert_eq!(
            room.rename("a", "Ada").unwrap().nickname,
            "Ada",
            "one's own name again"
        );
    }

    #[test]
    fn the_cap_and_the_lock_keep_newcomers_out_but_not_those_in() {
        let t0 = Instant::now();
        let mut room = Room::new(2);
        room.join("a", t0).unwrap();
        room.join("b", t0).unwrap();
        assert_eq!(room.join("c", t0), Err(Refusal::Full(2)));
        room.remove(1).unwrap();
        room.join("c", t0).unwrap();
        room.lock(true);
        assert_eq!(room.join("d", t0), Err(Refusal::Locked));
        assert!(room.join("b", t0).is_ok(), "someone in the room comes back");
    }

    #[test]
    fn removed_may_rejoin_banned_may_not() {
        let t0 = Instant::now();
        let mut room = Room::default();
        let a = room.join("a", t0).unwrap().id;
        let b = room.join("b", t0).unwrap().id;
        room.remove(a).unwrap();
        assert!(room.join("a", t0).is_ok());
        room.ban(b).unwrap();
        assert_eq!(room.join("b", t0), Err(Refusal::Banned));
        assert_eq!(room.len(), 1);
    }

    #[test]
    fn idle_participants_expire() {
        let t0 = Instant::now();
        let mut room = Room::default();
        room.join("a", t0).unwrap();
        room.join("b", t0).unwrap();
        room.seen("b", t0 + IDLE_AFTER / 2);
        let gone = room.expire(t0 + IDLE_AFTER);
        assert_eq!(gone.len(), 1);
        assert_eq!(room.participants()[0].id, 2);
    }
}
