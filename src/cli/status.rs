//! `herd status`: the table of a tasks file's tasks (or their JSON rows); reads the file, never
//! writes it.

use color_eyre::eyre::Result;

use super::args::StatusArgs;
use super::inputs::{EXIT_INVALID, print_problems, store_problems};
use crate::run::store::TaskStore;
use crate::run::summary;

pub(super) fn status(args: &StatusArgs) -> Result<i32> {
    let store = match TaskStore::read_only(&args.tasks.tasks) {
        Ok(store) => store,
        Err(e) => {
            print_problems(&store_problems(&e));
            return Ok(EXIT_INVALID);
        }
    };
    let file = store.file();
    let all: Vec<usize> = (0..file.tasks().len()).collect();
    if args.json {
        let rows: Vec<serde_json::Value> = file.tasks().iter().map(summary::row).collect();
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        print!(
            "{}",
            summary::table_for(file, &all, summary::stdout_width())
        );
    }
    Ok(0)
}
