use contacts_csv::csv::{quote, split_record};
use contacts_csv::{import, Contact};

#[test]
fn plain_and_quoted_fields() {
    assert_eq!(split_record(r#"Ada,"ada@example.org","likes tea, not coffee""#).unwrap(), [
        "Ada",
        "ada@example.org",
        "likes tea, not coffee"
    ]);
}

#[test]
fn import_contacts() {
    let text = "name,email,note\nBo,bo@example.org,neighbour\n\n\"Lee, Kim\",kim@example.org,\n";
    let contacts = import(text).unwrap();
    assert_eq!(contacts.len(), 2);
    assert_eq!(contacts[1].name, "Lee, Kim");
}

#[test]
fn note_with_quotes() {
    let text = "name,email,note\nCy,cy@example.org,\"calls herself \"\"the boss\"\", fair\"\n";
    assert_eq!(import(text).unwrap(), vec![Contact {
        name: "Cy".into(),
        email: "cy@example.org".into(),
        note: "calls herself \"the boss\", fair".into(),
    }]);
}

#[test]
fn quote_round_trips() {
    let note = "say \"hi\", then leave";
    assert_eq!(split_record(&format!("x,{}", quote(note))).unwrap()[1], note);
}

#[test]
fn unterminated_quote_is_reported() {
    assert_eq!(import("h\na,\"b,c\n").unwrap_err(), "line 2: unterminated quoted field");
}
