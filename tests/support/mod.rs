#![allow(dead_code)]
pub mod synth;
