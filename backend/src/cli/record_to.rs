//! Where `bench --record` writes: checked before the runs, written atomically after them.

use anyhow::Context;

pub struct RecordTo {
    pub path: std::path::PathBuf,
    temp: std::path::PathBuf,
}

impl RecordTo {
    /// Creates the temporary file beside `path` now, so a path that cannot be written is
    /// said before any run.
    pub fn prepare(path: &std::path::Path) -> anyhow::Result<RecordTo> {
        let name = path
            .file_name()
            .with_context(|| format!("--record {}: not a file name", path.display()))?;
        let mut temp_name = std::ffi::OsString::from(".");
        temp_name.push(name);
        temp_name.push(format!(".{}.tmp", std::process::id()));
        let temp = path.with_file_name(temp_name);
        std::fs::File::create(&temp)
            .with_context(|| format!("--record: cannot write beside {}", path.display()))?;
        Ok(RecordTo {
            path: path.to_path_buf(),
            temp,
        })
    }

    /// Writes the temporary file and renames it over `path`.
    pub fn write(&self, recording: &shared::Recording) -> anyhow::Result<()> {
        std::fs::write(&self.temp, recording.to_json())
            .and_then(|()| std::fs::rename(&self.temp, &self.path))
            .with_context(|| format!("--record: cannot write {}", self.path.display()))
    }
}

impl Drop for RecordTo {
    /// Gone once renamed; left over only when the runs failed.
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.temp);
    }
}
