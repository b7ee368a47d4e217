//! `tensorcast inspect [FILE...]`: what is in tensor files.
//!
//! Per file: the format (told by the one detector, [`super::detect`]), the size and any
//! safetensors metadata (a Parquet or Arrow file's rows and schema); per tensor: name, dtype,
//! shape, bytes, the data address's alignment and TensorFlow's `IsAligned`, min/max/mean/NaN
//! count for numeric dtypes (see [`super::stats`]), and TensorFlow's `DebugString`. A TFRecord
//! file of many serialize_tensor records is summarised by dtype and shape (`--records`).
//! What a file's report holds is charged to the `--max-memory` budget until it is printed. With no FILE, every tensor file in `samples/` (the current
//! directory's, else the source tree's) and its SavedModel folders. A directory argument means the tensor
//! files in it.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, Context, Result};
use serde_json::{json, Value};
use tensorcast::io::{escaped, FileContents};
use tensorcast::proto::{Message, TensorProto};
use tensorcast::Tensor;

use super::detect::Input;
use super::inspect_checkpoint::{self, CheckpointReport};
use super::progress::{self, human_bytes};
use super::source::BudgetScope;
use super::stats::{self, Stats};
use super::table::{Align, Table};
use super::{EXIT_ERROR, EXIT_OK};

/// What `inspect` found in one input.
enum Report {
    File(FileReport),
    Checkpoint(CheckpointReport),
    Records(Box<super::tfrecord::RecordsReport>),
}

impl Report {
    fn to_text(&self) -> String {
        match self {
            Report::File(r) => r.to_text(),
            Report::Checkpoint(r) => r.to_text(),
            Report::Records(r) => r.to_text(),
        }
    }

    fn to_json(&self) -> Value {
        match self {
            Report::File(r) => r.to_json(),
            Report::Checkpoint(r) => r.to_json(),
            Report::Records(r) => r.to_json(),
        }
    }
}

/// Arguments of `inspect`.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// Tensor files (npy, npz, safetensors, serialized TensorProto), TFRecord files (of
    /// serialize_tensor records, tf.train.Examples or TensorBoard events; none, GZIP or ZLIB),
    /// Parquet and Arrow IPC files (schema, rows, a tensor per column), TensorFlow
    /// checkpoints (prefix, .index, .data-*, checkpoint or SavedModel directory) or
    /// directories of tensor files; none: the sample files in samples/.
    pub files: Vec<PathBuf>,
    /// Values shown in each DebugString (TensorFlow's default is 3; -1 shows all).
    #[arg(
        long,
        value_name = "N",
        default_value_t = 3,
        allow_negative_numbers = true
    )]
    pub values: i64,
    /// Lay values out as TensorFlow's print_v2 does (nested brackets, `...` per axis).
    #[arg(long)]
    pub print_v2: bool,
    /// Print one JSON document instead of tables.
    #[arg(long)]
    pub json: bool,
    /// For TFRecord files of serialize_tensor records: how many records to list one by one
    /// (each tensor's row and DebugString), after a summary of every record grouped by dtype
    /// and shape (records, bytes, min/max/mean/NaN over all their values). Default 10, as
    /// `head`: a file of at most 10 records is shown tensor by tensor like a tensor file; a
    /// larger one is summarised, with its first 10 listed. 0 lists none, -1 all.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 10,
        allow_negative_numbers = true
    )]
    pub records: i64,
    /// For TensorFlow checkpoints: print exactly the lines TensorFlow's inspect_checkpoint
    /// prints (`<key> (<DT_TYPE>) <shape>` per entry).
    #[arg(long, conflicts_with = "json")]
    pub tf_debug_string: bool,
}

/// What `inspect` found about one tensor.
struct TensorReport {
    name: String,
    tensor: Tensor,
    alignment: Option<usize>,
    debug: String,
    /// The print_v2 values, when asked for.
    values_v2: Option<String>,
    stats: Option<Stats>,
}

/// What `inspect` found in one file.
pub(crate) struct FileReport {
    path: String,
    file_bytes: u64,
    /// The format as shown (`npz`, `tfrecord (GZIP), 3 serialize_tensor records`).
    contents_format: String,
    metadata: Vec<(String, String)>,
    /// A Parquet or Arrow file's rows and schema (each column's name and type).
    schema: Option<(u64, Vec<(String, String)>)>,
    tensors: Vec<TensorReport>,
}

/// Runs `inspect`.
pub(crate) fn run(args: &Args) -> Result<i32> {
    let files = if args.files.is_empty() {
        sample_files()?
    } else {
        let mut v = Vec::new();
        for f in &args.files {
            if f.is_dir() && !super::checkpoint::is_checkpoint(f) {
                let found = tensor_files_in(f)?;
                if found.is_empty() {
                    return Err(anyhow!("no tensor files in this directory"))
                        .with_context(|| f.display().to_string());
                }
                v.extend(found);
            } else {
                v.push(f.clone());
            }
        }
        v
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut failed = false;
    let mut json_files = Vec::new();
    for (i, path) in files.iter().enumerate() {
        // What a file's report holds is dropped before the next file is read: its charges to
        // the --max-memory budget are given back then.
        let _scope = BudgetScope::enter();
        let report = if super::checkpoint::is_checkpoint(path) {
            if args.tf_debug_string {
                match inspect_checkpoint::tf_debug_string(path) {
                    Ok(lines) => {
                        out.write_all(&lines)?;
                        out.flush()?;
                    }
                    Err(e) => {
                        failed = true;
                        eprintln!("tensorcast: {}", super::one_line(&e));
                    }
                }
                continue;
            }
            inspect_checkpoint::inspect(path, args.values).map(Report::Checkpoint)
        } else if args.tf_debug_string {
            Err(anyhow!(
                "not a TensorFlow checkpoint; --tf-debug-string prints a checkpoint's \
                 inspect_checkpoint lines"
            ))
            .with_context(|| escaped(&path.display().to_string()))
        } else {
            match super::detect::detect_path(path) {
                Some(Input::Records(c)) => {
                    super::tfrecord::inspect(path, c, args).map(|r| Report::Records(Box::new(r)))
                }
                Some(Input::Arrow(kind)) => {
                    super::arrow::inspect(path, kind, args).map(Report::File)
                }
                Some(Input::Tensors(_)) | None => inspect_file(path, args).map(Report::File),
            }
        };
        match report {
            Ok(report) => {
                if args.json {
                    json_files.push(report.to_json());
                } else {
                    if i > 0 {
                        writeln!(out)?;
                    }
                    out.write_all(report.to_text().as_bytes())?;
                    out.flush()?;
                }
            }
            Err(e) => {
                failed = true;
                out.flush()?;
                eprintln!("tensorcast: {}", super::one_line(&e));
                if args.json {
                    json_files.push(json!({
                        "path": path.display().to_string(),
                        "error": super::one_line(&e),
                    }));
                }
            }
        }
    }
    if args.json {
        let doc = json!({ "files": json_files });
        writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
    }
    out.flush()?;
    Ok(if failed { EXIT_ERROR } else { EXIT_OK })
}

fn inspect_file(path: &Path, args: &Args) -> Result<FileReport> {
    let (
        FileContents {
            format,
            tensors,
            metadata,
        },
        file_bytes,
    ) = super::source::load_sized(path)?;
    Ok(tensors_report(
        path,
        file_bytes,
        format.to_string(),
        metadata.into_iter().collect(),
        tensors,
        args,
    ))
}

/// The report on `tensors` read from `path` (statistics, DebugStrings as `args` say).
pub(crate) fn tensors_report(
    path: &Path,
    file_bytes: u64,
    contents_format: String,
    metadata: Vec<(String, String)>,
    tensors: Vec<tensorcast::io::NamedTensor>,
    args: &Args,
) -> FileReport {
    let numeric_bytes: u64 = tensors
        .iter()
        .filter(|t| super::decode::kind(t.tensor.dtype()).is_some())
        .map(|t| t.tensor.total_bytes() as u64)
        .sum();
    let pb = progress::bar(numeric_bytes, &format!("statistics of {}", path.display()));
    let mut reports = Vec::with_capacity(tensors.len());
    for nt in tensors {
        let t = nt.tensor;
        let stats = stats::compute(&t, &mut |n| pb.inc(n));
        let values_v2 = args.print_v2.then(|| t.summarize_value(args.values, true));
        let debug = match &values_v2 {
            Some(v) => format!(
                "Tensor<type: {} shape: {} values: {v}>",
                t.dtype().name(),
                t.shape()
            ),
            None => t.debug_string(args.values),
        };
        reports.push(TensorReport {
            name: nt.name,
            alignment: t.buffer().map(|b| b.address_alignment()),
            tensor: t,
            debug,
            values_v2,
            stats,
        });
    }
    pb.finish_and_clear();
    FileReport {
        path: path.display().to_string(),
        file_bytes,
        contents_format,
        metadata,
        schema: None,
        tensors: reports,
    }
}

impl FileReport {
    /// Adds a table's row count and schema (shown before its tensors).
    pub(crate) fn set_schema(&mut self, rows: u64, columns: Vec<(String, String)>) {
        self.schema = Some((rows, columns));
    }

    pub(crate) fn to_text(&self) -> String {
        let n = self.tensors.len();
        let mut s = format!(
            "{}: {}, {} tensor{}, {}\n",
            escaped(&self.path),
            self.contents_format,
            n,
            if n == 1 { "" } else { "s" },
            human_bytes(self.file_bytes)
        );
        s.push_str(&self.body_text());
        s
    }

    /// [`Self::to_text`] without its first line: metadata, schema, the tensors' table and
    /// their DebugStrings.
    pub(crate) fn body_text(&self) -> String {
        let n = self.tensors.len();
        let mut s = String::new();
        for (k, v) in &self.metadata {
            s.push_str(&format!("  metadata {}: {}\n", escaped(k), escaped(v)));
        }
        if let Some((_, columns)) = &self.schema {
            for (name, ty) in columns {
                s.push_str(&format!("  column {}: {}\n", escaped(name), escaped(ty)));
            }
        }
        let mut table = Table::new(
            &[
                &[
                    ("name", Align::Left),
                    ("dtype", Align::Left),
                    ("shape", Align::Left),
                    ("bytes", Align::Right),
                    ("align", Align::Right),
                    ("IsAligned", Align::Left),
                ][..],
                &Stats::COLUMNS,
            ]
            .concat(),
        );
        for t in &self.tensors {
            let dtype = t.tensor.dtype();
            let mut row = vec![
                escaped(&t.name),
                dtype.name(),
                t.tensor.shape().to_string(),
                t.tensor.total_bytes().to_string(),
                t.alignment.map_or("-".into(), |a| a.to_string()),
                if t.tensor.is_aligned() { "yes" } else { "no" }.into(),
            ];
            row.extend(Stats::cells(t.stats.as_ref(), dtype));
            table.row(row);
        }
        if n > 0 {
            s.push_str(&table.render("  "));
        }
        for t in &self.tensors {
            match &t.values_v2 {
                // print_v2 values span lines: the header, then the values indented.
                Some(values) => {
                    s.push_str(&format!(
                        "  {}: {}\n",
                        escaped(&t.name),
                        super::source::terminal_safe(&t.tensor.device_safe_debug_string())
                    ));
                    for l in values.lines() {
                        s.push_str(&format!("    {}\n", super::source::terminal_safe(l)));
                    }
                }
                None => s.push_str(&format!(
                    "  {}: {}\n",
                    escaped(&t.name),
                    super::source::terminal_safe(&t.debug)
                )),
            }
        }
        s
    }

    pub(crate) fn to_json(&self) -> Value {
        let tensors: Vec<Value> = self
            .tensors
            .iter()
            .map(|t| {
                let dtype = t.tensor.dtype();
                json!({
                    "name": t.name,
                    "dtype": dtype.name(),
                    "shape": t.tensor.shape().dim_sizes(),
                    "elements": t.tensor.num_elements(),
                    "bytes": t.tensor.total_bytes(),
                    "alignment": t.alignment,
                    "is_aligned": t.tensor.is_aligned(),
                    "debug_string": t.debug,
                    "stats": t.stats.as_ref().map(|s| s.to_json(dtype)),
                })
            })
            .collect();
        let metadata: serde_json::Map<String, Value> = self
            .metadata
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect();
        let mut doc = json!({
            "path": self.path,
            "format": self.contents_format,
            "file_bytes": self.file_bytes,
            "metadata": metadata,
            "tensors": tensors,
        });
        if let Some((rows, columns)) = &self.schema {
            doc["rows"] = json!(rows);
            doc["schema"] = columns
                .iter()
                .map(|(name, ty)| json!({"name": name, "type": ty}))
                .collect();
        }
        doc
    }
}

/// The samples directory: `./samples`, else the one in the source tree.
fn samples_dir() -> Option<PathBuf> {
    let local = PathBuf::from("samples");
    if local.is_dir() {
        return Some(local);
    }
    // This package sits at crates/cli of the source tree.
    let built = Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)?
        .join("samples");
    built.is_dir().then_some(built)
}

fn sample_files() -> Result<Vec<PathBuf>> {
    let dir = samples_dir().ok_or_else(|| {
        anyhow!(
            "no FILE given and no samples/ directory here or in the source tree ({}); name the files \
             to inspect",
            env!("CARGO_MANIFEST_DIR")
        )
    })?;
    let files = tensor_files_in(&dir)?;
    if files.is_empty() {
        return Err(anyhow!("no tensor files in this directory"))
            .with_context(|| dir.display().to_string());
    }
    Ok(files)
}

/// The tensor files in `dir` (by extension or content) and its SavedModel folders (their
/// variables), sorted by name; other files (a README, say) and subdirectories are skipped.
fn tensor_files_in(dir: &Path) -> Result<Vec<PathBuf>> {
    let entries = std::fs::read_dir(dir).with_context(|| dir.display().to_string())?;
    let mut files = Vec::new();
    for entry in entries {
        let path = entry.with_context(|| dir.display().to_string())?.path();
        if path.is_dir()
            && tensorcast::io::saved_model::is_saved_model(&path)
            && super::checkpoint::is_checkpoint(&path)
        {
            // A SavedModel folder: its variables.
            files.push(path);
            continue;
        }
        if !path.is_file()
            || path
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with('.'))
        {
            continue;
        }
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.ends_with(".index") {
            // A checkpoint, shown once by its index; its data files are skipped below.
            files.push(path);
            continue;
        }
        if super::checkpoint::is_data_file_name(name) || foreign(&path) {
            continue;
        }
        match super::detect::detect_path(&path) {
            Some(Input::Records(_) | Input::Arrow(_)) => files.push(path),
            Some(Input::Tensors(_)) if !is_graph_def(&path) => files.push(path),
            _ => {}
        }
    }
    files.sort();
    Ok(files)
}

/// True for a file that is a GraphDef rather than a tensor (samples/ holds graphs too; those
/// are shown by `tensorcast graph inspect`): it is not a TensorProto but is a GraphDef with
/// nodes. Read through the one input layer, at most 256 MiB.
fn is_graph_def(path: &Path) -> bool {
    let Ok(bytes) =
        tensorcast::io::read_path_at_most(path, 256 << 20, tensorcast::io::ReadMode::Read)
    else {
        return false;
    };
    TensorProto::decode(bytes.as_slice()).is_err() && super::source::is_graph_def(bytes.as_slice())
}

/// True for a file tensorcast knows it does not read (Keras, HDF5, MetaGraphDef...).
fn foreign(path: &Path) -> bool {
    super::source::foreign_format(path).is_some()
}
