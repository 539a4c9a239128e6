//! Newline-delimited JSON-RPC over stdin/stdout that remembers whether the
//! client closed its end, so a client that leaves while work is in flight
//! reads as a clean exit rather than a protocol failure.

use agent_client_protocol::Lines;
use futures::{Sink, Stream};
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

/// Set once stdin reached its end (or failed), or stdout's pipe broke: the client is gone.
#[derive(Clone, Default)]
pub struct ClientClosed(Arc<AtomicBool>);

impl ClientClosed {
    /// Whether the client closed its side of the connection.
    pub fn is_set(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }

    fn set(&self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

type Outgoing = std::pin::Pin<Box<dyn Sink<String, Error = io::Error> + Send>>;
type Incoming = std::pin::Pin<Box<dyn Stream<Item = io::Result<String>> + Send>>;

/// The stdio transport and the flag its reader sets at end of input.
pub fn stdio() -> (Lines<Outgoing, Incoming>, ClientClosed) {
    let closed = ClientClosed::default();
    let reader = tokio::io::BufReader::new(tokio::io::stdin()).lines();
    let incoming = futures::stream::unfold((reader, closed.clone()), |(mut reader, closed)| async move {
        if closed.is_set() {
            return None;
        }
        match reader.next_line().await {
            Ok(Some(line)) => Some((Ok(line), (reader, closed))),
            Ok(None) => {
                closed.set();
                None
            }
            Err(e) => {
                // A broken stdin ends the connection like an EOF, after reporting the error once.
                closed.set();
                Some((Err(e), (reader, closed)))
            }
        }
    });
    let gone = closed.clone();
    let outgoing = futures::sink::unfold((tokio::io::stdout(), gone), |(mut out, gone), line: String| async move {
        let mut bytes = line.into_bytes();
        bytes.push(b'\n');
        let written = async {
            out.write_all(&bytes).await?;
            out.flush().await
        };
        match written.await {
            Ok(()) => Ok::<_, io::Error>((out, gone)),
            Err(e) => {
                // A client that exited closes our stdout before we may have read its EOF:
                // a broken pipe is the client leaving too.
                if e.kind() == io::ErrorKind::BrokenPipe {
                    gone.set();
                }
                Err(e)
            }
        }
    });
    (Lines::new(Box::pin(outgoing) as Outgoing, Box::pin(incoming) as Incoming), closed)
}
