//! Cross-module tests of description compression.
