package main

import (
	"io/fs"
	"os"
)

// hostFS is the host's file system as an fs.FS that takes any path the
// user types (relative to the working directory or absolute), which
// os.DirFS does not. The engine reads a model's config.json through it
// (sim.Config.Files); errors are os.ReadFile's, naming the file.
type hostFS struct{}

func (hostFS) Open(name string) (fs.File, error) { return os.Open(name) }

// ReadFile makes fs.ReadFile call os.ReadFile directly.
func (hostFS) ReadFile(name string) ([]byte, error) { return os.ReadFile(name) }

var _ fs.ReadFileFS = hostFS{}
