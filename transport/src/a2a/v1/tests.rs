//! Tests of the 1.0 codec.
