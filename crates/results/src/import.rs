//! Readers for files other tools wrote (cyclictest `--json` and `-h`
//! histogram text), turned into [`crate::RunResult`] so `report` can put
//! rtshield and cyclictest runs on one graph.
