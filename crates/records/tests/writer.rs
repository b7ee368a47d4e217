//! The TFRecord file writer on targets that are not plain new files: FIFOs, symbolic links,
//! character devices, files it replaces. It goes through tensorcast-io's atomic output layer,
//! so it treats them as every other tensorcast writer does.

use std::io::Read;
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::Path;
use std::process::Command;
use std::sync::mpsc;
use std::time::Duration;

use tensorcast_records::{
    read_records, write_file, Compression, FileWriter, ReaderOptions, RecordWriter,
};
use tensorcast_testkit::files::dir_entries;

fn file_of(records: &[&[u8]], compression: Compression) -> Vec<u8> {
    let mut w = RecordWriter::new(Vec::new(), compression).unwrap();
    for r in records {
        w.write_record(r).unwrap();
    }
    w.finish().unwrap()
}

fn mkfifo(path: &Path) {
    assert!(Command::new("mkfifo").arg(path).status().unwrap().success());
}

#[test]
fn tfrecord_output_to_fifo_streams_and_keeps_it() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("out.tfrecord");
    mkfifo(&fifo);
    let first = file_of(&[b"first"], Compression::None);
    let (tx, rx) = mpsc::channel();
    let reader = {
        let (fifo, n) = (fifo.clone(), first.len());
        std::thread::spawn(move || {
            let mut f = std::fs::File::open(fifo).unwrap();
            let mut head = vec![0u8; n];
            f.read_exact(&mut head).unwrap();
            tx.send(head.clone()).unwrap();
            f.read_to_end(&mut head).unwrap();
            head
        })
    };
    let mut w = FileWriter::create(&fifo, Compression::None).unwrap();
    assert!(w.is_stream());
    w.write_record(b"first").unwrap();
    w.flush().unwrap();
    // The reader has the first record before the writer is committed: a stream.
    let head = rx.recv_timeout(Duration::from_secs(30)).unwrap();
    assert_eq!(head, first);
    w.write_record(b"second").unwrap();
    w.commit().unwrap();
    let all = reader.join().unwrap();
    assert_eq!(all, file_of(&[b"first", b"second"], Compression::None));
    let m = std::fs::symlink_metadata(&fifo).unwrap();
    assert!(m.file_type().is_fifo(), "the FIFO is kept");
    assert_eq!(dir_entries(dir.path()), ["out.tfrecord"]);
}

#[test]
fn tfrecord_output_to_symlink_writes_through() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real.tfrecord");
    let link = dir.path().join("link.tfrecord");
    let dangling = dir.path().join("dangling.tfrecord");
    std::fs::write(&real, b"old").unwrap();
    std::os::unix::fs::symlink("real.tfrecord", &link).unwrap();
    std::os::unix::fs::symlink("new.tfrecord", &dangling).unwrap();
    for c in [Compression::None, Compression::Gzip] {
        write_file(&link, c, [b"a".as_slice(), b"bc"]).unwrap();
        write_file(&dangling, c, [b"d".as_slice()]).unwrap();
        for l in [&link, &dangling] {
            let m = std::fs::symlink_metadata(l).unwrap();
            assert!(
                m.file_type().is_symlink(),
                "{} is still a link",
                l.display()
            );
        }
        let opts = ReaderOptions::with_compression(c);
        let got = std::fs::read(&real).unwrap();
        assert_eq!(
            read_records(&got, opts.clone()).unwrap(),
            [b"a".as_slice(), b"bc"]
        );
        let got = std::fs::read(dir.path().join("new.tfrecord")).unwrap();
        assert_eq!(read_records(&got, opts).unwrap(), [b"d".as_slice()]);
        assert_eq!(
            dir_entries(dir.path()),
            [
                "dangling.tfrecord",
                "link.tfrecord",
                "new.tfrecord",
                "real.tfrecord"
            ]
        );
    }
}

#[test]
fn tfrecord_output_to_char_device_keeps_the_device() {
    let dir = tempfile::tempdir().unwrap();
    // A null device of our own where this process may make one (root), else /dev/null.
    let own = dir.path().join("null");
    let made = Command::new("mknod")
        .arg(&own)
        .args(["c", "1", "3"])
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    let device = if made { own } else { "/dev/null".into() };
    let before = dir_entries(device.parent().unwrap());
    write_file(&device, Compression::Gzip, [b"x".as_slice(); 1000]).unwrap();
    let m = std::fs::symlink_metadata(&device).unwrap();
    assert!(
        m.file_type().is_char_device(),
        "{} is still a device",
        device.display()
    );
    assert_eq!(
        dir_entries(device.parent().unwrap()),
        before,
        "no temporary file"
    );
}

#[test]
fn tfrecord_output_replacing_a_file_keeps_its_mode() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.tfrecord");
    std::fs::write(&path, b"old").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o604)).unwrap();
    write_file(&path, Compression::None, [b"new".as_slice()]).unwrap();
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o604);
    let got = std::fs::read(&path).unwrap();
    assert_eq!(
        read_records(&got, ReaderOptions::default()).unwrap(),
        [b"new".as_slice()]
    );
}

#[test]
fn tfrecord_output_onto_a_directory_is_refused_and_leaves_no_litter() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("d.tfrecord")).unwrap();
    let e = FileWriter::create(dir.path().join("d.tfrecord"), Compression::None).unwrap_err();
    assert!(e.to_string().contains("is a directory, not a file"), "{e}");
    assert_eq!(dir_entries(dir.path()), ["d.tfrecord"]);
}
