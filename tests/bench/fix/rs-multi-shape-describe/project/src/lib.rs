//! A tiny vector canvas: shapes, areas, bounding boxes.
pub mod canvas;
pub mod shapes;
