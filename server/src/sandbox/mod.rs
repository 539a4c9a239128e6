//! Shadow workspace, process runner with limits, test detection and failure parsing, shell tool, permission policy.
