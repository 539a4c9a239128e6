//! GGUF model files on this machine: where a role's model is found for the
//! embedded backend, and what `tinycoder models list` shows.
//!
//! A role's model is found, in order, at `models.<role>.path`, as
//! `<backend.models_dir>/<name>.gguf` (llama-server's `--models-dir` layout),
//! or in Ollama's model store by the name `ollama pull` gave it (the manifest
//! names the GGUF blob, loaded directly: no Ollama server needed).

use crate::config::{BackendConfig, Config, ModelRole};
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

/// Where a model file was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelSource {
    /// `models.<role>.path`.
    ConfiguredPath,
    /// `backend.models_dir`.
    ModelsDir,
    /// Ollama's store (a blob named by a manifest).
    OllamaStore,
}

impl ModelSource {
    /// Words for listings.
    pub fn describe(self) -> &'static str {
        match self {
            Self::ConfiguredPath => "models.<role>.path",
            Self::ModelsDir => "backend.models_dir",
            Self::OllamaStore => "Ollama's store",
        }
    }
}

/// A GGUF file and the name it is known by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalModel {
    pub name: String,
    pub path: PathBuf,
    pub source: ModelSource,
}

/// Where the embedded backend looks for models.
#[derive(Debug, Clone)]
pub struct ModelLocator {
    models_dir: Option<PathBuf>,
    ollama_store: Option<PathBuf>,
}

impl ModelLocator {
    /// The places `backend` names, with Ollama's store found the way Ollama finds it.
    pub fn new(backend: &BackendConfig) -> Self {
        // Read by the function the trust check compares them with.
        let models_dir = crate::paths::setting_path(&backend.models_dir, None);
        let ollama_store = crate::paths::setting_path(&backend.ollama_models, None).or_else(default_ollama_store);
        Self { models_dir, ollama_store }
    }

    /// Ollama's store this locator reads, if any.
    pub fn ollama_store(&self) -> Option<&Path> {
        self.ollama_store.as_deref()
    }

    /// The GGUF of `role`'s model, or why there is none (the places looked at, and how to fix it).
    pub fn find_role(&self, config: &Config, role: ModelRole) -> Result<LocalModel, String> {
        let m = config.models.get(role);
        if let Some(path) = crate::paths::setting_path(&m.path, None) {
            return if path.is_file() {
                Ok(LocalModel { name: m.name.clone(), path, source: ModelSource::ConfiguredPath })
            } else {
                Err(format!("models.{role}.path is {} and no such file exists; set it to a GGUF file", path.display()))
            };
        }
        self.find(&m.name).ok_or_else(|| self.not_found(&m.name, role))
    }

    /// The GGUF of the model called `name` (models dir first, then Ollama's store).
    pub fn find(&self, name: &str) -> Option<LocalModel> {
        // A name that leaves the folder it is looked up in is no model of that folder.
        if crate::config::security::model_name_leaves_its_folder(name) {
            tracing::warn!("model name `{name}` names a path outside the models folder; not looked up");
            return None;
        }
        if let Some(dir) = &self.models_dir {
            let path = dir.join(format!("{name}.gguf"));
            if path.is_file() {
                return Some(LocalModel { name: name.to_string(), path, source: ModelSource::ModelsDir });
            }
        }
        let store = self.ollama_store.as_ref()?;
        let path = ollama_blob(store, name)?;
        Some(LocalModel { name: name.to_string(), path, source: ModelSource::OllamaStore })
    }

    fn not_found(&self, name: &str, role: ModelRole) -> String {
        let mut looked = Vec::new();
        if let Some(d) = &self.models_dir {
            looked.push(d.join(format!("{name}.gguf")).display().to_string());
        }
        match &self.ollama_store {
            Some(s) => looked.push(format!("Ollama's store at {}", s.display())),
            None => looked.push("Ollama's store (none found)".into()),
        }
        format!(
            "model `{name}` was not found on disk (looked at {}); run `ollama pull {name}`, set backend.models_dir to a folder of <name>.gguf files, or set models.{role}.path to a GGUF file",
            looked.join(", ")
        )
    }

    /// Every model this locator can load: the models dir's GGUFs, then Ollama's pulled models.
    pub fn list(&self) -> Vec<LocalModel> {
        let mut out = Vec::new();
        if let Some(dir) = &self.models_dir {
            let mut files: Vec<_> = std::fs::read_dir(dir)
                .into_iter()
                .flatten()
                .flatten()
                .filter_map(|e| {
                    let p = e.path();
                    let name = p.file_name()?.to_str()?.strip_suffix(".gguf")?.to_string();
                    p.is_file().then_some(LocalModel { name, path: p, source: ModelSource::ModelsDir })
                })
                .collect();
            files.sort_by(|a, b| a.name.cmp(&b.name));
            out.extend(files);
        }
        if let Some(store) = &self.ollama_store {
            for name in ollama_names(store) {
                if let Some(path) = ollama_blob(store, &name) {
                    out.push(LocalModel { name, path, source: ModelSource::OllamaStore });
                }
            }
        }
        out
    }
}

/// Ollama's own order: `$OLLAMA_MODELS`, the user's `~/.ollama/models`, the Linux service's store.
fn default_ollama_store() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("OLLAMA_MODELS").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(d));
    }
    let home = std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".ollama/models"));
    home.into_iter().chain([PathBuf::from("/usr/share/ollama/.ollama/models")]).find(|d| d.join("manifests").is_dir())
}

/// The manifest path parts of an Ollama model name: `name:tag`, `ns/name:tag` or `host/ns/name:tag`.
fn manifest_path(store: &Path, name: &str) -> Option<PathBuf> {
    let (repo, tag) = match name.rsplit_once(':') {
        Some((r, t)) if !t.contains('/') => (r, t),
        _ => (name, "latest"),
    };
    let parts: Vec<&str> = repo.split('/').collect();
    let (host, ns, model) = match parts.as_slice() {
        [m] => ("registry.ollama.ai", "library", *m),
        [ns, m] => ("registry.ollama.ai", *ns, *m),
        [host, ns, m] => (*host, *ns, *m),
        _ => return None,
    };
    if [host, ns, model, tag].iter().any(|p| p.is_empty() || *p == "." || *p == ".." || p.contains('\\')) {
        return None;
    }
    Some(store.join("manifests").join(host).join(ns).join(model).join(tag))
}

/// The GGUF blob a manifest names (its `application/vnd.ollama.image.model` layer).
fn ollama_blob(store: &Path, name: &str) -> Option<PathBuf> {
    let text = std::fs::read_to_string(manifest_path(store, name)?).ok()?;
    let manifest: serde_json::Value = serde_json::from_str(&text).ok()?;
    let layer = manifest
        .get("layers")?
        .as_array()?
        .iter()
        .find(|l| l.get("mediaType").and_then(|m| m.as_str()) == Some("application/vnd.ollama.image.model"))?;
    let digest = layer.get("digest")?.as_str()?;
    let hex = digest.strip_prefix("sha256:")?;
    if !hex.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let path = store.join("blobs").join(format!("sha256-{hex}"));
    path.is_file().then_some(path)
}

/// The names of the models in Ollama's store, as `ollama list` shows them.
fn ollama_names(store: &Path) -> Vec<String> {
    let root = store.join("manifests");
    let mut names = Vec::new();
    let dirs = |p: &Path| -> Vec<(String, PathBuf)> {
        let mut v: Vec<_> = std::fs::read_dir(p)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| Some((e.file_name().to_str()?.to_string(), e.path())))
            .collect();
        v.sort();
        v
    };
    for (host, hp) in dirs(&root) {
        for (ns, np) in dirs(&hp) {
            for (model, mp) in dirs(&np) {
                for (tag, tp) in dirs(&mp) {
                    if !tp.is_file() {
                        continue;
                    }
                    let name = match (host.as_str(), ns.as_str()) {
                        ("registry.ollama.ai", "library") => format!("{model}:{tag}"),
                        ("registry.ollama.ai", _) => format!("{ns}/{model}:{tag}"),
                        _ => format!("{host}/{ns}/{model}:{tag}"),
                    };
                    names.push(name);
                }
            }
        }
    }
    names
}

/// What a GGUF file's header says about the model, read without loading its weights.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GgufInfo {
    pub architecture: Option<String>,
    /// `<architecture>.context_length`: the context the model was trained with.
    pub context_length: Option<u64>,
    /// Whether the file carries a chat template (`tokenizer.chat_template`).
    pub has_chat_template: bool,
}

/// Reads the metadata of the GGUF at `path`; an error says why the file is not a usable GGUF.
pub fn read_gguf_info(path: &Path) -> Result<GgufInfo, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    let mut r = GgufReader { inner: BufReader::with_capacity(1 << 16, file) };
    let not_gguf = |e: String| format!("{} is not a GGUF model file ({e})", path.display());
    let mut magic = [0u8; 4];
    r.inner.read_exact(&mut magic).map_err(|e| not_gguf(e.to_string()))?;
    if &magic != b"GGUF" {
        return Err(not_gguf("wrong magic bytes".into()));
    }
    let version = r.u32().map_err(not_gguf)?;
    if !(2..=3).contains(&version) {
        return Err(not_gguf(format!("GGUF version {version}, expected 2 or 3")));
    }
    let _tensors = r.u64().map_err(not_gguf)?;
    let kv_count = r.u64().map_err(not_gguf)?;
    let mut info = GgufInfo::default();
    let mut lengths: Vec<(String, u64)> = Vec::new();
    for _ in 0..kv_count {
        let key = r.string().map_err(not_gguf)?;
        let ty = r.u32().map_err(not_gguf)?;
        match (key.as_str(), ty) {
            ("general.architecture", 8) => info.architecture = Some(r.string().map_err(not_gguf)?),
            ("tokenizer.chat_template", 8) => {
                r.skip_value(ty).map_err(not_gguf)?;
                info.has_chat_template = true;
            }
            (k, 4 | 5 | 10 | 11) if k.ends_with(".context_length") => {
                let v =
                    if matches!(ty, 4 | 5) { r.u32().map_err(not_gguf)? as u64 } else { r.u64().map_err(not_gguf)? };
                lengths.push((k.to_string(), v));
            }
            _ => r.skip_value(ty).map_err(not_gguf)?,
        }
    }
    if let Some(arch) = &info.architecture {
        let want = format!("{arch}.context_length");
        info.context_length = lengths.iter().find(|(k, _)| *k == want).map(|(_, v)| *v);
    }
    Ok(info)
}

struct GgufReader<R: Read> {
    inner: R,
}

impl<R: Read> GgufReader<R> {
    fn bytes<const N: usize>(&mut self) -> Result<[u8; N], String> {
        let mut b = [0u8; N];
        self.inner.read_exact(&mut b).map_err(|e| e.to_string())?;
        Ok(b)
    }
    fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.bytes()?))
    }
    fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(self.bytes()?))
    }
    fn skip(&mut self, n: u64) -> Result<(), String> {
        let copied = std::io::copy(&mut (&mut self.inner).take(n), &mut std::io::sink()).map_err(|e| e.to_string())?;
        if copied == n {
            Ok(())
        } else {
            Err("the file ends inside its metadata".into())
        }
    }
    fn string(&mut self) -> Result<String, String> {
        let len = self.u64()?;
        if len > 1 << 24 {
            return Err(format!("a metadata string of {len} bytes"));
        }
        let mut buf = vec![0u8; len as usize];
        self.inner.read_exact(&mut buf).map_err(|e| e.to_string())?;
        String::from_utf8(buf).map_err(|_| "a metadata string that is not UTF-8".into())
    }
    fn skip_value(&mut self, ty: u32) -> Result<(), String> {
        match ty {
            0 | 1 | 7 => self.skip(1),
            2 | 3 => self.skip(2),
            4..=6 => self.skip(4),
            10..=12 => self.skip(8),
            8 => {
                let len = self.u64()?;
                self.skip(len)
            }
            9 => {
                let item = self.u32()?;
                let n = self.u64()?;
                if item == 9 {
                    return Err("nested metadata arrays".into());
                }
                for _ in 0..n {
                    self.skip_value(item)?;
                }
                Ok(())
            }
            t => Err(format!("unknown metadata type {t}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_manifest(store: &Path, rel: &str, digest: &str) {
        let p = store.join("manifests").join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        let m = serde_json::json!({"layers": [
            {"mediaType": "application/vnd.ollama.image.template", "digest": "sha256:00"},
            {"mediaType": "application/vnd.ollama.image.model", "digest": format!("sha256:{digest}")},
        ]});
        std::fs::write(p, m.to_string()).unwrap();
        std::fs::create_dir_all(store.join("blobs")).unwrap();
        std::fs::write(store.join("blobs").join(format!("sha256-{digest}")), b"GGUF").unwrap();
    }

    fn locator(models_dir: Option<&Path>, store: &Path) -> ModelLocator {
        ModelLocator { models_dir: models_dir.map(Path::to_path_buf), ollama_store: Some(store.to_path_buf()) }
    }

    #[test]
    fn ollama_names_resolve_to_the_manifests_model_blob() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path();
        write_manifest(store, "registry.ollama.ai/library/qwen2.5-coder/1.5b", "ab12");
        write_manifest(store, "registry.ollama.ai/library/smollm2/latest", "cd34");
        write_manifest(store, "registry.ollama.ai/someone/tiny/q4", "ef56");
        write_manifest(store, "hf.co/org/repo/Q4_K_M", "0789");
        let l = locator(None, store);
        let blob = |n: &str| l.find(n).map(|m| m.path.file_name().unwrap().to_str().unwrap().to_string());
        assert_eq!(blob("qwen2.5-coder:1.5b").as_deref(), Some("sha256-ab12"));
        assert_eq!(blob("smollm2").as_deref(), Some("sha256-cd34"), "no tag means :latest");
        assert_eq!(blob("smollm2:latest").as_deref(), Some("sha256-cd34"));
        assert_eq!(blob("someone/tiny:q4").as_deref(), Some("sha256-ef56"));
        assert_eq!(blob("hf.co/org/repo:Q4_K_M").as_deref(), Some("sha256-0789"));
        assert_eq!(blob("qwen2.5-coder:7b"), None);
        assert_eq!(blob("../../etc:passwd"), None);
        let names: Vec<String> = l.list().into_iter().map(|m| m.name).collect();
        assert_eq!(names, ["hf.co/org/repo:Q4_K_M", "qwen2.5-coder:1.5b", "smollm2:latest", "someone/tiny:q4"]);
    }

    #[test]
    fn the_models_dir_comes_before_the_ollama_store() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("store");
        write_manifest(&store, "registry.ollama.ai/library/qwen2.5-coder/1.5b", "ab12");
        let models = dir.path().join("models");
        std::fs::create_dir_all(&models).unwrap();
        std::fs::write(models.join("qwen2.5-coder:1.5b.gguf"), b"GGUF").unwrap();
        let l = locator(Some(&models), &store);
        let found = l.find("qwen2.5-coder:1.5b").unwrap();
        assert_eq!((found.source, found.path), (ModelSource::ModelsDir, models.join("qwen2.5-coder:1.5b.gguf")));
        let mut config = crate::config::LoadedConfig::load(&crate::config::ConfigInputs::default()).unwrap().config;
        config.models.coder.name = "missing:1b".into();
        let err = l.find_role(&config, ModelRole::Coder).unwrap_err();
        assert!(err.contains("ollama pull missing:1b") && err.contains("models.coder.path"), "{err}");
        config.models.coder.path = models.join("qwen2.5-coder:1.5b.gguf").display().to_string();
        assert_eq!(l.find_role(&config, ModelRole::Coder).unwrap().source, ModelSource::ConfiguredPath);
        config.models.coder.path = "/no/such.gguf".into();
        assert!(l.find_role(&config, ModelRole::Coder).unwrap_err().contains("/no/such.gguf"));
    }

    fn gguf_string(out: &mut Vec<u8>, s: &str) {
        out.extend((s.len() as u64).to_le_bytes());
        out.extend(s.as_bytes());
    }

    #[test]
    fn the_gguf_header_gives_the_architecture_and_trained_context() {
        let mut f = b"GGUF".to_vec();
        f.extend(3u32.to_le_bytes());
        f.extend(0u64.to_le_bytes());
        f.extend(4u64.to_le_bytes());
        gguf_string(&mut f, "tokenizer.ggml.tokens");
        f.extend(9u32.to_le_bytes());
        f.extend(8u32.to_le_bytes());
        f.extend(2u64.to_le_bytes());
        gguf_string(&mut f, "a");
        gguf_string(&mut f, "b");
        gguf_string(&mut f, "qwen2.context_length");
        f.extend(4u32.to_le_bytes());
        f.extend(32768u32.to_le_bytes());
        gguf_string(&mut f, "general.architecture");
        f.extend(8u32.to_le_bytes());
        gguf_string(&mut f, "qwen2");
        gguf_string(&mut f, "tokenizer.chat_template");
        f.extend(8u32.to_le_bytes());
        gguf_string(&mut f, "{% for m in messages %}{% endfor %}");
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.gguf");
        std::fs::write(&p, &f).unwrap();
        let info = read_gguf_info(&p).unwrap();
        assert_eq!(
            info,
            GgufInfo { architecture: Some("qwen2".into()), context_length: Some(32768), has_chat_template: true }
        );
        std::fs::write(&p, &f[..f.len() - 5]).unwrap();
        assert!(read_gguf_info(&p).unwrap_err().contains("not a GGUF"));
        std::fs::write(&p, b"PK\x03\x04 a zip file").unwrap();
        assert!(read_gguf_info(&p).unwrap_err().contains("wrong magic"));
    }
}
