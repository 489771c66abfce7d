package main

import "github.com/urfave/cli/v2"

// mcpCommand is replaced by the MCP server's command (issue 7).
func mcpCommand() *cli.Command {
	return &cli.Command{Name: "mcp", Usage: "serve memory tools over MCP (stdio)", Hidden: true}
}
