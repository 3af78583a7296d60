//! `loglab lessons`: the lab's lessons (list, solve, check), for teachers and scripts.

use clap::{Args, Subcommand};
use serde_json::json;

#[derive(Args)]
pub struct LessonsArgs {
    #[command(subcommand)]
    pub cmd: Option<LessonsCmd>,
    /// Print the list as JSON (`id`, `title`, `thread`, `version`, `kernel_function`, `link`).
    #[arg(long)]
    pub json: bool,
}

#[derive(Subcommand)]
pub enum LessonsCmd {
    /// Print an answer the model accepts for a student's variant (seed).
    Solve {
        id: String,
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
    /// Judge an answer for a student's variant, as the lab's Check does.
    Check {
        id: String,
        answer: String,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[arg(long)]
        json: bool,
    },
}

pub fn run(a: &LessonsArgs) -> Result<(), String> {
    match &a.cmd {
        None => {
            let lessons = loglab_lessons::lessons();
            if a.json {
                let v: Vec<_> = lessons
                    .iter()
                    .map(|l| {
                        json!({"id": l.id, "title": l.title, "thread": l.thread, "version": l.version,
                            "kernel_function": l.kernel_function,
                            "link": l.link(1).map(|q| format!("{}{q}", crate::LAB_ORIGIN)).unwrap_or_default()})
                    })
                    .collect();
                crate::print_json(&json!(v));
            } else {
                for l in &lessons {
                    println!("{:<24} source thread {}  {}", l.id, l.thread, l.title);
                }
            }
            Ok(())
        }
        Some(LessonsCmd::Solve { id, seed }) => {
            println!("{}", loglab_lessons::find(id)?.solve(*seed)?);
            Ok(())
        }
        Some(LessonsCmd::Check { id, answer, seed, json: as_json }) => {
            let v = loglab_lessons::find(id)?.check(*seed, answer)?;
            if *as_json {
                crate::print_json(&json!({"correct": v.correct, "message": v.message}));
            } else {
                println!("{}", v.message);
            }
            Ok(())
        }
    }
}
