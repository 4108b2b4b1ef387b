//! `--redact`: what an observation says about who connected, replaced by numbers, so a report
//! or a file can be handed over. Each connection's client address becomes `client N` (its id)
//! and each distinct connection name `name N` (numbered in order of first appearance), in the
//! connections and in the notes said beside them; counts, times, verdicts and command names
//! stay. Applied before the connections are worded, so no sentence carries the originals.

use shared::observe::ObservedConnection;

/// Replaces the client addresses and connection names of `conns`, and in `notes`, by numbers.
pub fn redact(conns: &mut [ObservedConnection], notes: &mut [String]) {
    let mut names: Vec<String> = Vec::new();
    let mut replaced: Vec<(String, String)> = Vec::new();
    for c in conns {
        let client = format!("client {}", c.id);
        replaced.push((std::mem::replace(&mut c.client, client.clone()), client));
        if let Some(name) = c.name.take() {
            let n = match names.iter().position(|seen| *seen == name) {
                Some(i) => i + 1,
                None => {
                    names.push(name.clone());
                    names.len()
                }
            };
            let numbered = format!("name {n}");
            replaced.push((name, numbered.clone()));
            c.name = Some(numbered);
        }
    }
    // The longest first, so an address is not left half-replaced by a shorter one inside it.
    replaced.sort_by_key(|(from, _)| std::cmp::Reverse(from.len()));
    for note in notes {
        for (from, to) in replaced.iter().filter(|(from, _)| !from.is_empty()) {
            *note = note.replace(from.as_str(), to);
        }
    }
}
