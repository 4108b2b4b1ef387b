use super::super::encode::encode_command;
use super::*;

fn frame_in_pieces(side: Side, bytes: &[u8], piece: usize) -> Vec<Message> {
    let mut f = Framer::new(side);
    let mut out = Vec::new();
    for chunk in bytes.chunks(piece) {
        f.feed(chunk, |m| out.push(m.clone()));
    }
    assert!(!f.broken(), "broken at piece size {piece}");
    out
}

fn names(ms: &[Message]) -> Vec<String> {
    ms.iter().map(|m| m.name().as_str().to_string()).collect()
}

#[test]
fn a_set_s_value_is_measured_and_a_library_s_name_kept_in_any_pieces() {
    let bytes = b"*5\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nvvvvv\r\n$2\r\nEX\r\n$2\r\n10\r\n\
*4\r\n$6\r\nCLIENT\r\n$7\r\nSETINFO\r\n$8\r\nLIB-NAME\r\n$8\r\nredis-py\r\n\
*2\r\n$3\r\nGET\r\n$1\r\nk\r\n";
    for piece in 1..=bytes.len() {
        let ms = frame_in_pieces(Side::Commands, bytes, piece);
        assert_eq!(names(&ms), ["SET", "CLIENT", "GET"]);
        assert_eq!(ms[0].third_len(), Some(5), "piece {piece}");
        assert_eq!(ms[1].arg(3), Some(&b"redis-py"[..]), "piece {piece}");
        assert_eq!(ms[2].third_len(), None);
    }
}

#[test]
fn a_reply_keeps_its_simple_string_and_an_arrays_last_integer() {
    let bytes = b"+RESET\r\n*3\r\n$11\r\nunsubscribe\r\n$-1\r\n:0\r\n:7\r\n+OK\r\n";
    for piece in 1..=bytes.len() {
        let ms = frame_in_pieces(Side::Replies, bytes, piece);
        assert_eq!(ms.len(), 4);
        assert_eq!(ms[0].arg(0), Some(&b"RESET"[..]));
        assert_eq!(
            (ms[1].name().as_str(), ms[1].last_int()),
            ("UNSUBSCRIBE", Some(0))
        );
        assert_eq!(
            ms[2].last_int(),
            None,
            "a top-level integer is no array's element"
        );
        assert_eq!(ms[3].arg(0), Some(&b"OK"[..]));
    }
}

#[test]
fn several_commands_in_one_read_and_every_split_agree() {
    let mut bytes = Vec::new();
    encode_command(&mut bytes, &[b"SET", b"k1", b"v1"]);
    encode_command(&mut bytes, &[b"client", b"setname", b"app-1"]);
    bytes.extend_from_slice(b"PING\r\nset k2 v2\n\r\n");
    encode_command(&mut bytes, &[b"GET", b"k1"]);
    let whole = frame_in_pieces(Side::Commands, &bytes, bytes.len());
    assert_eq!(names(&whole), ["SET", "CLIENT", "PING", "SET", "GET"]);
    assert_eq!(whole[1].arg(2), Some(&b"app-1"[..]));
    assert_eq!(whole[2].kind, b'i');
    for piece in 1..bytes.len() {
        assert_eq!(
            frame_in_pieces(Side::Commands, &bytes, piece),
            whole,
            "piece {piece}"
        );
    }
}

#[test]
fn a_megabyte_value_in_pieces_is_one_command_and_not_kept() {
    let value = vec![b'x'; 1 << 20];
    let mut bytes = Vec::new();
    encode_command(&mut bytes, &[b"SET", b"big", &value]);
    encode_command(&mut bytes, &[b"HELLO", b"3", b"SETNAME", &value]);
    encode_command(&mut bytes, &[b"PING"]);
    for piece in [1000, 4096, 65_536, 65_537] {
        let ms = frame_in_pieces(Side::Commands, &bytes, piece);
        assert_eq!(names(&ms), ["SET", "HELLO", "PING"]);
        assert_eq!(ms[0].args().count(), 1, "a SET's arguments are not kept");
        assert_eq!(
            ms[1].args().count(),
            3,
            "HELLO's are, but the 1 MB name is counted, not kept"
        );
    }
}

#[test]
fn only_the_commands_whose_arguments_are_read_keep_them() {
    let mut bytes = Vec::new();
    encode_command(&mut bytes, &[b"set", b"k", b"v"]);
    let long: Vec<&[u8]> = vec![
        b"XREADGROUP",
        b"GROUP",
        b"g",
        b"c",
        b"COUNT",
        b"1",
        b"NOACK",
        b"BLOCK",
        b"0",
    ];
    encode_command(&mut bytes, &long);
    bytes.extend_from_slice(b"hello 3 AUTH u p SETNAME inline-app\r\n");
    let ms = frame_in_pieces(Side::Commands, &bytes, bytes.len());
    assert_eq!(ms[0].args().collect::<Vec<_>>(), [b"set"]);
    assert_eq!(ms[1].arg(7), Some(&b"BLOCK"[..]));
    assert_eq!(ms[1].arg(8), None);
    assert_eq!(ms[2].arg(6), Some(&b"inline-app"[..]));
}

#[test]
fn a_read_that_ends_mid_length_prefix() {
    let bytes = b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$12\r\nhello world!\r\n";
    let mut f = Framer::new(Side::Commands);
    // "$1" | "2\r\nhello…": the split falls inside "$12".
    let cut = bytes.iter().position(|&b| b == b'2').unwrap();
    assert_eq!(f.count(&bytes[..cut]), 0);
    assert_eq!(f.count(&bytes[cut..]), 1);
}

#[test]
fn replies_resp2_and_resp3() {
    let bytes: &[u8] = b"+OK\r\n-ERR no\r\n:1\r\n$-1\r\n*-1\r\n*2\r\n$1\r\na\r\n*1\r\n:2\r\n\
        %1\r\n+k\r\n+v\r\n_\r\n,1.5\r\n#t\r\n(12\r\n=7\r\ntxt:abc\r\n!3\r\nbad\r\n\
        >3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n|1\r\n+ttl\r\n:3\r\n$2\r\nok\r\n~0\r\n";
    let whole = frame_in_pieces(Side::Replies, bytes, bytes.len());
    let kinds: String = whole.iter().map(|m| m.kind as char).collect();
    // The attribute (|) is not a message: the value after it is.
    assert_eq!(kinds, "+-:$**%_,#(=!>$~");
    assert_eq!(whole[13].arg(0), Some(&b"message"[..]));
    for piece in 1..bytes.len() {
        assert_eq!(
            frame_in_pieces(Side::Replies, bytes, piece),
            whole,
            "piece {piece}"
        );
    }
}

#[test]
fn garbage_breaks_the_framer_without_growing_it() {
    let mut f = Framer::new(Side::Replies);
    assert_eq!(f.count(b"?what\r\n"), 0);
    assert!(f.broken());
    let mut f = Framer::new(Side::Commands);
    assert_eq!(f.count(b"*x\r\n"), 0);
    assert!(f.broken());
    let mut f = Framer::new(Side::Commands);
    f.count(&vec![b'a'; MAX_LINE + 10]);
    assert!(f.broken(), "an endless line is not kept");
    assert!(
        f.count(b"\r\nPING\r\n") == 0,
        "nothing is framed once broken"
    );
}

#[test]
fn a_stream_that_begins_as_tls_is_encrypted_and_never_framed() {
    // A TLS 1.2 record header (handshake, version 3.1) and bytes that happen to hold
    // CRLFs and a '*': none of it is counted.
    let hello = b"\x16\x03\x01\x00\x2a*1\r\n$4\r\nPING\r\n";
    for side in [Side::Commands, Side::Replies] {
        let mut f = Framer::new(side);
        assert_eq!(f.count(hello), 0);
        assert!(f.encrypted() && f.broken(), "{side:?}");
        assert_eq!(f.count(b"*1\r\n$4\r\nPING\r\n"), 0);
    }
    // The byte later in a RESP stream is just a byte of a value.
    let mut f = Framer::new(Side::Commands);
    assert_eq!(f.count(b"*2\r\n$4\r\nECHO\r\n$1\r\n\x16\r\n"), 1);
    assert!(!f.encrypted());
}
