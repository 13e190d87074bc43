#![allow(dead_code)]
pub mod frames;
pub mod sim;
pub mod synth;
