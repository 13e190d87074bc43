#![allow(dead_code)]
pub mod sim;
pub mod synth;
