//! Where `bench --record` and `--html` (and `replay --html`) write: checked before the runs,
//! written atomically after them.

use anyhow::Context;

pub struct RecordTo {
    pub path: std::path::PathBuf,
    /// The flag that named the path, for the messages (`--record`).
    flag: &'static str,
    temp: std::path::PathBuf,
}

impl RecordTo {
    /// Creates the temporary file beside `path` now, so a path that cannot be written is
    /// said before any run.
    pub fn prepare(path: &std::path::Path, flag: &'static str) -> anyhow::Result<RecordTo> {
        let name = path
            .file_name()
            .with_context(|| format!("{flag} {}: not a file name", path.display()))?;
        let mut temp_name = std::ffi::OsString::from(".");
        temp_name.push(name);
        temp_name.push(format!(".{}.tmp", std::process::id()));
        let temp = path.with_file_name(temp_name);
        std::fs::File::create(&temp)
            .with_context(|| format!("{flag}: cannot write beside {}", path.display()))?;
        Ok(RecordTo {
            path: path.to_path_buf(),
            flag,
            temp,
        })
    }

    /// Writes the temporary file and renames it over `path`.
    pub fn write(&self, recording: &shared::Recording) -> anyhow::Result<()> {
        self.write_text(&recording.to_json())
    }

    /// `write` for any text.
    pub fn write_text(&self, text: &str) -> anyhow::Result<()> {
        std::fs::write(&self.temp, text)
            .and_then(|()| std::fs::rename(&self.temp, &self.path))
            .with_context(|| format!("{}: cannot write {}", self.flag, self.path.display()))
    }

    /// The file's name (no directory), as the page and the messages show it.
    pub fn file_name(&self) -> String {
        shown_name(&self.path)
    }
}

/// `path`'s last part, or all of it when it has none.
pub fn shown_name(path: &std::path::Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// Writes `recording` as one HTML file of `page` to `to` and says where, and how large, on
/// stderr.
pub fn write_html(
    to: &RecordTo,
    page: &pipescope::html_file::Page,
    recording: shared::Recording,
) -> anyhow::Result<()> {
    let html = pipescope::html_file::of_recording(page, recording, &to.file_name());
    to.write_text(&html)?;
    eprintln!(
        "wrote {} ({}): one HTML file with the page and the runs inside; it opens from disk in a browser, with no server and no network",
        to.path.display(),
        kilobytes(html.len())
    );
    Ok(())
}

/// `bytes` for people: `812 KB` (1 KB = 1,000 bytes).
pub fn kilobytes(bytes: usize) -> String {
    format!("{} KB", bytes.div_ceil(1000))
}

impl Drop for RecordTo {
    /// Gone once renamed; left over only when the runs failed.
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.temp);
    }
}
